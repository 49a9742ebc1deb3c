"""In-memory stand-ins and builders for unit tests of the turn."""

from __future__ import annotations

import os
import re
from datetime import UTC, datetime, timedelta
from typing import Any
from unittest import mock

from stepwise.config import Settings
from stepwise.inbox.models import QueuedMessage
from stepwise.model.types import ModelRequest, ModelResponse, TextSink
from stepwise.prompt.system import is_turn_context
from stepwise.services import TurnServices, TurnSettings
from stepwise.states.contracts.finish_turn import FinishTurnOutput
from stepwise.states.contracts.load_context import LoadContextInput
from stepwise.states.loop import Ended, Hooks, run_turn
from stepwise.turn.ref import TurnRef
from stepwise.turn.start import TurnStart
from stepwise.turn_records.models import TurnMeta


class ScriptedModel:
    """A ChatModel answering from a list; records requests. With `on_text` it streams each text block word
    by word before answering."""

    def __init__(self, *responses: ModelResponse | Exception) -> None:
        self.responses = list(responses)
        self.requests: list[ModelRequest] = []

    def complete(self, request: ModelRequest, on_text: TextSink | None = None) -> ModelResponse:
        self.requests.append(request)
        answer = self.responses.pop(0)
        if isinstance(answer, Exception):
            raise answer
        if on_text is not None:
            for block in answer.content:
                if block.get("type") == "text":
                    for word in re.findall(r"\S+\s*", block["text"]):
                        on_text(word)
        return answer


def tool_use(*calls: tuple[str, dict[str, Any]]) -> ModelResponse:
    """A response asking for these tool calls, in order (ids `toolu_<n>_<name>`)."""
    return ModelResponse(
        content=[
            {"type": "tool_use", "id": f"toolu_{n}_{name}", "name": name, "input": args}
            for n, (name, args) in enumerate(calls)
        ],
        stop_reason="tool_use",
        model="claude-test",
    )


def text_response(text: str, stop_reason: str = "end_turn") -> ModelResponse:
    return ModelResponse(
        content=[{"type": "text", "text": text}] if text else [], stop_reason=stop_reason, model="claude-test"
    )


def conversation_texts(messages: list[dict[str, Any]]) -> list[str]:
    """The text blocks of a request's messages, oldest first, without Stepwise's per-turn context block."""
    return [
        b["text"]
        for m in messages
        for b in m["content"]
        if b.get("type") == "text" and not is_turn_context(b)
    ]


def user_texts(request: dict[str, Any]) -> list[str]:
    """The text blocks of the user's messages of a Messages API request as the fake API received it, oldest
    first, without Stepwise's per-turn context block."""
    return conversation_texts([m for m in request["messages"] if m["role"] == "user"])


def turn_context_text(request: ModelRequest) -> str:
    """The per-turn context block that ends the request's newest user message."""
    (context,) = [b["text"] for b in request.messages[-1]["content"] if is_turn_context(b)]
    return str(context)


class Clock:
    """A clock that advances one second per reading."""

    def __init__(self) -> None:
        self.now = datetime(2026, 11, 22, 9, 30, tzinfo=UTC)

    def __call__(self) -> datetime:
        self.now += timedelta(seconds=1)
        return self.now


class RecordingStarter:
    """A TurnStarter that remembers names, like Step Functions does (a name starts once)."""

    def __init__(self) -> None:
        self.started: dict[str, dict[str, Any]] = {}

    def start(self, name: str, payload: dict[str, Any]) -> bool:
        if name in self.started:
            return False
        self.started[name] = payload
        return True


def turn_settings(**overrides: Any) -> TurnSettings:
    """The states' settings as a deployment builds them from `Settings` (its defaults, not the environment's),
    for a test model, with drafts not held back and no daily token cap; `overrides` are Settings' fields."""
    given = {"anthropic_model": "claude-test", "draft_interval_seconds": 0.0, "daily_token_budget": 0}
    with mock.patch.dict(os.environ, {}, clear=True):
        return TurnSettings.from_settings(Settings(**(given | overrides)))


def turn_meta(**fields: Any) -> TurnMeta:
    """A turn's record with placeholder ids and keys, for code that only reads a few of its fields."""
    base: dict[str, Any] = {
        "turn_id": "t",
        "chat_id": 7,
        "user_id": 7,
        "update_id": 1,
        "user_message_id": "m",
        "first_key": "a",
        "last_key": "b",
        "created_at": "2026-11-22T09:00:00.000Z",
    }
    return TurnMeta(**{**base, **fields})


def turn_start(
    services: TurnServices,
    text: str,
    *,
    chat_id: int = 7,
    update_id: int = 1,
    message_id: str | None = None,
    created_at: str = "2026-11-22T09:00:00.000Z",
    topic: int | None = None,
    user_id: int | None = None,
    sender: str | None = None,
) -> TurnStart:
    """Put a message in the conversation's inbox (as the webhook does) and return the start of a turn for it
    (named `turn-<update_id>`). `user_id` is the chat's by default (a private chat); in a group (a negative
    `chat_id`) give the member's, and `sender`, their first name."""
    user = chat_id if user_id is None else user_id
    services.outbound.sequencer().inbox.enqueue(
        QueuedMessage(
            chat_id=chat_id,
            topic=topic,
            update_id=update_id,
            user_id=user,
            id=message_id or f"msg-{update_id}",
            text=text,
            sender=sender,
            received_at=created_at,
        ),
        expires_at=0,
    )
    return TurnStart(
        turn=TurnRef(
            turn_id=f"turn-{update_id}", chat_id=chat_id, topic=topic, user_id=user, update_id=update_id
        )
    )


def drive_turn(services: TurnServices, start: TurnStart | LoadContextInput) -> FinishTurnOutput:
    """Run a turn through the turn's loop in code (`stepwise.states.loop`, every route of the state machine's
    WhatNext) until it ends; what its FinishTurn (or FailTurn) returned. A turn that parks on an approval
    fails the test: give it to `stepwise_local.in_memory.workflow.InProcessTurns` instead."""
    tokens = iter(range(1, 1_000))
    outcome = run_turn(
        TurnStart(turn=start.turn, limits=start.limits),
        services,
        Hooks(task_token=lambda: f"token-{next(tokens)}"),
    )
    assert isinstance(outcome, Ended), f"the turn parked on approval {outcome.next.approval_id}"
    assert outcome.finished is not None, f"the turn's execution failed: {outcome.error}"
    return outcome.finished
