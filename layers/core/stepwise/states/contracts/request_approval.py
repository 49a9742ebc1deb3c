"""RequestApproval's input and output."""

from pydantic import Field

from stepwise.states.contracts.base import TurnInput, _Contract


class RequestApprovalInput(TurnInput):
    """RequestApproval's input: the request to show and the token that resumes the turn."""

    approval_id: str
    task_token: str = Field(min_length=1)


class RequestApprovalOutput(_Contract):
    """The Telegram message that carries the buttons."""

    message_id: int
