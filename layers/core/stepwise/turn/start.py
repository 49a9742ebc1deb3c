"""The execution's input: the turn's reference and the limits the state machine itself reads. The code that
starts turns builds it (the inbox's sequencer, background jobs); LoadContext reads the limits, and the code
that ends a turn reads its execution's input. The other states receive only the `TurnRef` and build neither
model."""

from pydantic import BaseModel, Field

from stepwise.turn.ref import REF_CONFIG, TurnRef


class Limits(BaseModel):
    """Per-deployment limits the state machine itself reads (TimeoutSecondsPath)."""

    model_config = REF_CONFIG

    approval_timeout_seconds: int = Field(ge=1)


class TurnStart(BaseModel):
    """The execution's input (the messages themselves wait in the chat's inbox)."""

    model_config = REF_CONFIG

    turn: TurnRef
    limits: Limits | None = None
