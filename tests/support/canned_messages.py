"""Messages API answers for the model client's tests: messages, server-sent event streams and error bodies as
the API sends them, and a model whose HTTP answers them from a script without sockets (`canned_model`, over
`support.scripted_http.ScriptedPool`)."""

from __future__ import annotations

import json
from typing import Any

from stepwise.model.messages_api import MessagesApiModel
from stepwise_local.anthropic_server import stream_events
from support.scripted_http import Canned, ScriptedPool

Event = tuple[str, dict[str, Any]]


def message(
    content: list[dict[str, Any]],
    stop_reason: str | None = "end_turn",
    usage: dict[str, Any] | None = None,
    model: str = "claude-haiku-4-5",
    **extra: Any,
) -> dict[str, Any]:
    """A Message as the API returns it."""
    return {
        "id": "msg_01",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": usage if usage is not None else {"input_tokens": 10, "output_tokens": 3},
        **extra,
    }


def error_body(error_type: str, text: str = "scripted failure") -> dict[str, Any]:
    """An error answer's body, e.g. error_body("overloaded_error")."""
    return {"type": "error", "error": {"type": error_type, "message": text}}


def events_of(answer: dict[str, Any]) -> list[Event]:
    """The SSE events of a streamed answer, as the fake API streams it (text a few words, tool input JSON a
    few characters per delta)."""
    return stream_events(answer)


def sse(events: list[Event], *, ping_every: int = 0) -> bytes:
    """The stream's bytes: `event:` and `data:` lines, a blank line after each event (and a ping every
    `ping_every` events)."""
    parts: list[str] = []
    for index, (name, data) in enumerate(events):
        parts.append(f"event: {name}\ndata: {json.dumps(data)}\n\n")
        if ping_every and index % ping_every == ping_every - 1:
            parts.append('event: ping\ndata: {"type": "ping"}\n\n')
    return "".join(parts).encode()


def json_answer(body: Any, status: int = 200, headers: dict[str, str] | None = None) -> Canned:
    """A JSON answer (a message, or an error body with an error status)."""
    return Canned(status, json.dumps(body).encode(), {"content-type": "application/json", **(headers or {})})


def stream_answer(body: bytes, *, pieces: int = 0, broken: bool = False) -> Canned:
    """A streamed answer (`text/event-stream`); with `pieces`, the bytes arrive in pieces of that size."""
    chunks = [body[i : i + pieces] for i in range(0, len(body), pieces)] if pieces else [body]
    return Canned(200, headers={"content-type": "text/event-stream"}, chunks=chunks, broken=broken)


def canned_model(
    *answers: Canned | Exception, max_retries: int = 0, timeout_seconds: float = 5.0, **kwargs: Any
) -> tuple[MessagesApiModel, ScriptedPool, list[float]]:
    """A MessagesApiModel whose HTTP answers from `answers` (no sockets), the pool it sends to, and its
    waits."""
    pool = ScriptedPool(list(answers))
    waits: list[float] = []
    model = MessagesApiModel(
        kwargs.pop("api_key", "sk-test-key"),
        kwargs.pop("base_url", None),
        timeout_seconds,
        max_retries,
        transport=pool.transport(),
        sleep=waits.append,
    )
    return model, pool, waits
