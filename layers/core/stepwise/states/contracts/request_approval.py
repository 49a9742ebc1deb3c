"""RequestApproval's input and output."""

from pydantic import BaseModel, Field

from stepwise.states.contracts.base import CONTRACT_CONFIG, TurnInput


class RequestApprovalInput(TurnInput):
    """RequestApproval's input: the request to show and the token that resumes the turn."""

    approval_id: str
    task_token: str = Field(min_length=1)


class RequestApprovalOutput(BaseModel):
    """The Telegram message that carries the buttons."""

    model_config = CONTRACT_CONFIG

    message_id: int
