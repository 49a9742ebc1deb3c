"""The port for per-turn records."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from stepwise.media.models import Heard
    from stepwise.turn_records.models import ModelStep, Reply, TurnMeta


class TurnStore(Protocol):
    """Per-turn records. Implementations: DynamoDB (with TTL), and in memory for tests."""

    def put_meta(self, meta: TurnMeta) -> None:
        """Create or replace the turn's meta record."""
        ...

    def get_meta(self, turn_id: str) -> TurnMeta:
        """The turn's meta record; KeyError when the turn is unknown."""
        ...

    def put_step(self, turn_id: str, step: ModelStep) -> None:
        """Store a model response (replacing one of the same step, as a retried call does)."""
        ...

    def get_step(self, turn_id: str, step: int) -> ModelStep:
        """One model response; KeyError when it does not exist."""
        ...

    def steps(self, turn_id: str) -> list[ModelStep]:
        """The turn's model responses, in order."""
        ...

    def put_reply(self, turn_id: str, reply: Reply) -> Reply:
        """Set the turn's reply unless delivery has begun; returns the reply in force."""
        ...

    def get_reply(self, turn_id: str) -> Reply | None:
        """The turn's reply, if one was set."""
        ...

    def mark_sent(self, turn_id: str, sent_chunks: int) -> None:
        """Record how many chunks of the reply reached Telegram."""
        ...

    def settle_token(self, turn_id: str, revoked: bool) -> None:
        """Forget the reply's token seed: its token was delivered, or (`revoked`) never will be."""
        ...

    def set_topic_thread(self, turn_id: str, thread: int) -> None:
        """Record the topic the reply opened (/new), before anything is sent in it."""
        ...

    def mark_voice_sent(self, turn_id: str) -> None:
        """Record that the reply's spoken copy reached Telegram (or will not be tried again)."""
        ...

    def put_heard(self, turn_id: str, message_id: str, heard: Heard) -> None:
        """Keep what a voice note of the turn said (a retried state reads it instead of transcribing)."""
        ...

    def heard(self, turn_id: str, message_id: str) -> Heard | None:
        """What the turn's voice note `message_id` said, if it was transcribed already."""
        ...
