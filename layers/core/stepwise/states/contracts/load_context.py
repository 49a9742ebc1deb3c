"""LoadContext's input: the execution's own."""

from stepwise.states.contracts.base import TurnInput
from stepwise.turn.start import Limits


class LoadContextInput(TurnInput):
    """The execution's input, as LoadContext receives it."""

    limits: Limits | None = None
