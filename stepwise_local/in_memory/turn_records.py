"""An in-memory TurnStore for unit tests."""

from __future__ import annotations

from stepwise.media.models import Heard
from stepwise.turn_records.models import ModelStep, NewToken, NewTopic, Reply, TurnMeta


class InMemoryTurnStore:
    """Turn records in dicts."""

    def __init__(self) -> None:
        self.metas: dict[str, TurnMeta] = {}
        self.step_records: dict[tuple[str, int], ModelStep] = {}
        self.replies: dict[str, Reply] = {}
        self.heard_notes: dict[tuple[str, str], Heard] = {}

    def put_meta(self, meta: TurnMeta) -> None:
        self.metas[meta.turn_id] = meta

    def get_meta(self, turn_id: str) -> TurnMeta:
        return self.metas[turn_id]

    def put_step(self, turn_id: str, step: ModelStep) -> None:
        self.step_records[(turn_id, step.step)] = step.model_copy(deep=True)

    def get_step(self, turn_id: str, step: int) -> ModelStep:
        return self.step_records[(turn_id, step)].model_copy(deep=True)

    def steps(self, turn_id: str) -> list[ModelStep]:
        return [s.model_copy(deep=True) for (t, _), s in sorted(self.step_records.items()) if t == turn_id]

    def put_reply(self, turn_id: str, reply: Reply) -> Reply:
        existing = self.replies.get(turn_id)
        if existing is not None and existing.sent_chunks > 0:
            return existing
        self.replies[turn_id] = reply.model_copy(deep=True)
        return reply

    def get_reply(self, turn_id: str) -> Reply | None:
        reply = self.replies.get(turn_id)
        return reply.model_copy(deep=True) if reply else None

    def mark_sent(self, turn_id: str, sent_chunks: int) -> None:
        self.replies[turn_id].sent_chunks = sent_chunks

    def settle_token(self, turn_id: str, revoked: bool) -> None:
        extra = self.replies[turn_id].extra
        assert isinstance(extra, NewToken)
        extra.seed, extra.revoked = None, revoked

    def set_topic_thread(self, turn_id: str, thread: int) -> None:
        extra = self.replies[turn_id].extra
        assert isinstance(extra, NewTopic)
        extra.thread = thread

    def mark_voice_sent(self, turn_id: str) -> None:
        self.replies[turn_id].voice_sent = True

    def put_heard(self, turn_id: str, message_id: str, heard: Heard) -> None:
        self.heard_notes[(turn_id, message_id)] = heard

    def heard(self, turn_id: str, message_id: str) -> Heard | None:
        return self.heard_notes.get((turn_id, message_id))
