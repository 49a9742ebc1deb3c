"""In-memory stand-ins and builders for unit tests of the turn."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from stepwise.model.types import ModelRequest, ModelResponse
from stepwise.turn.contracts import IncomingMessage, TurnRef, TurnStart


class ScriptedModel:
    """A ChatModel answering from a list; records requests."""

    def __init__(self, *responses: ModelResponse | Exception) -> None:
        self.responses = list(responses)
        self.requests: list[ModelRequest] = []

    def complete(self, request: ModelRequest) -> ModelResponse:
        self.requests.append(request)
        answer = self.responses.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer


def text_response(text: str, stop_reason: str = "end_turn") -> ModelResponse:
    return ModelResponse(
        content=[{"type": "text", "text": text}] if text else [], stop_reason=stop_reason, model="claude-test"
    )


class Clock:
    """A clock that advances one second per reading."""

    def __init__(self) -> None:
        self.now = datetime(2026, 11, 22, 9, 30, tzinfo=UTC)

    def __call__(self) -> datetime:
        self.now += timedelta(seconds=1)
        return self.now


def turn_start(
    text: str,
    *,
    chat_id: int = 7,
    update_id: int = 1,
    message_id: str | None = None,
    created_at: str = "2026-11-22T09:00:00.000Z",
) -> TurnStart:
    return TurnStart(
        turn=TurnRef(turn_id=f"turn-{update_id}", chat_id=chat_id, user_id=chat_id, update_id=update_id),
        message=IncomingMessage(id=message_id or f"msg-{update_id}", text=text, created_at=created_at),
    )
