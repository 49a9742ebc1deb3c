"""CallModel's input and output."""

from pydantic import Field

from stepwise.states.contracts.base import Next, TurnInput


class CallModelInput(TurnInput):
    """CallModel's input: the previous decision (its `final` and `waits`)."""

    next: Next = Field(default_factory=lambda: Next(route="model"))


class CallModelOutput(Next):
    """CallModel's decision, with what the call cost (published as metrics; the state machine keeps only the
    decision's fields)."""

    stop_reason: str = ""
    tool_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_input_tokens: int = 0
    cache_creation_input_tokens: int = 0
