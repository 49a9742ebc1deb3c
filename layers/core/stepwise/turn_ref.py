"""What names a turn: the execution's input. The inbox starts turns with it and every state receives it, so it
lives below both (the states' own contracts are in `stepwise.states.contracts`)."""

from pydantic import BaseModel, ConfigDict, Field

# Each model sets it rather than inheriting it from a shared base: a class is built by every state's import.
REF_CONFIG = ConfigDict(defer_build=True, extra="ignore")


class TurnRef(BaseModel):
    """Who and what a turn is about; every state receives it. `turn_id` is the execution's name; `user_id`
    and `update_id` are those of the oldest waiting message when it started (LoadContext decides what the
    turn answers, and whose it is)."""

    model_config = REF_CONFIG

    turn_id: str = Field(min_length=1)
    chat_id: int
    user_id: int
    update_id: int
    job: int | None = Field(default=None, ge=1)  # a background job's number: the turn is that job

    def log_keys(self) -> dict[str, object]:
        """The keys every log line of this turn carries."""
        return {"turn_id": self.turn_id, "chat_id": self.chat_id, "update_id": self.update_id}


class Limits(BaseModel):
    """Per-deployment limits the state machine itself reads (TimeoutSecondsPath)."""

    model_config = REF_CONFIG

    approval_timeout_seconds: int = Field(ge=1)


class TurnStart(BaseModel):
    """The execution's input (the messages themselves wait in the chat's inbox)."""

    model_config = REF_CONFIG

    turn: TurnRef
    limits: Limits | None = None
