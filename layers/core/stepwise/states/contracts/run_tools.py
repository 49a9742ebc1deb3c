"""RunTools' input."""

from pydantic import Field

from stepwise.states.contracts.base import Next, TurnInput


class RunToolsInput(TurnInput):
    """RunTools' input: the step whose tool calls to run. `approvals`: calls that need approval are gathered
    into a request (else they are refused: the route said none needs one). `resume`: back from the approval
    wait, the turn first takes the chat back; `retake_attempt` is the state's retry count (after
    `MAX_RETAKE_RETRIES` busy answers it goes on regardless)."""

    next: Next
    approvals: bool = False
    resume: bool = False
    retake_attempt: int = Field(default=0, ge=0)
