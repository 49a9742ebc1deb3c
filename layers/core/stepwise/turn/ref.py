"""What names a turn. Every state receives it and the inbox starts turns with it, so it lives below both (the
states' own contracts are in `stepwise.states.contracts`; the execution's whole input, `TurnStart`, is in
`stepwise.turn.start`, which only the code that starts or ends a turn builds)."""

from pydantic import BaseModel, ConfigDict, Field

from stepwise.telegram.conversation import Conversation

# The configuration of every model of a turn's reference (built on first use; a payload's other keys ignored).
REF_CONFIG = ConfigDict(defer_build=True, extra="ignore")


class TurnRef(BaseModel):
    """Who and what a turn is about; every state receives it. `turn_id` is the execution's name; `user_id`
    and `update_id` are those of the oldest waiting message when it started (LoadContext decides what the
    turn answers, and whose it is)."""

    model_config = REF_CONFIG

    turn_id: str = Field(min_length=1)
    chat_id: int
    topic: int | None = None  # the topic's message_thread_id; None: the chat itself (an older input too)
    account: int | None = None  # the owner whose business account the chat is in; None: a chat with the bot
    user_id: int
    update_id: int
    job: int | None = Field(default=None, ge=1)  # a background job's number: the turn is that job

    @property
    def conversation(self) -> Conversation:
        """The conversation the turn answers."""
        return Conversation(self.chat_id, self.topic, self.account)

    def log_keys(self) -> dict[str, object]:
        """The keys every log line of this turn carries."""
        keys: dict[str, object] = {
            "turn_id": self.turn_id,
            "chat_id": self.chat_id,
            "update_id": self.update_id,
        }
        if self.account is not None:
            keys["account"] = self.account
        return keys if self.topic is None else keys | {"topic": self.topic}
