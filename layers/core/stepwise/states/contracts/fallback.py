"""UseFallback's input."""

from pydantic import Field

from stepwise.states.contracts.base import Next, TurnInput


class FallbackInput(TurnInput):
    """UseFallback's input: the error that ended the model calls, and the decision that led to the call."""

    error: str | None = None
    next: Next = Field(default_factory=lambda: Next(route="model"))
