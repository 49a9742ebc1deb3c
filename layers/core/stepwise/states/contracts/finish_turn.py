"""FinishTurn's input and output."""

from pydantic import BaseModel

from stepwise.states.contracts.base import CONTRACT_CONFIG, TurnInput


class FinishTurnInput(TurnInput):
    """FinishTurn's input. `error`: the turn failed (this error's name): the friendly error reply replaces any
    other. `deliver`: False when delivery failed for good; the turn is saved and finished without it."""

    error: str | None = None
    deliver: bool = True


class FinishTurnOutput(BaseModel):
    """How the turn ended: chunks sent, whether the reply was stored, and the next turn started (if any)."""

    model_config = CONTRACT_CONFIG

    source: str | None = None
    sent_chunks: int = 0
    saved: bool = False
    next_turn: str | None = None
