"""Messages API answers for the model client's tests: messages, server-sent event streams and error bodies as
the API sends them, and a `requests` adapter that answers from a script without sockets (`CannedAdapter`)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import requests
from requests.adapters import BaseAdapter
from urllib3.exceptions import ProtocolError

from stepwise.model.messages_api import MessagesApiModel
from stepwise_local.anthropic_server import stream_events

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


@dataclass
class Canned:
    """One answer: status, headers and body; a body in `chunks` arrives piece by piece, and with `broken`
    the connection drops after the last of them (as a cut chunked stream does)."""

    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    chunks: list[bytes] | None = None
    broken: bool = False

    def response(self, request: requests.PreparedRequest) -> requests.Response:
        response = requests.Response()
        response.status_code = self.status
        response.reason = "scripted"
        response.headers.update(self.headers)
        response.raw = _Body(self.chunks if self.chunks is not None else [self.body], self.broken)
        response.url = request.url or ""
        response.request = request
        return response


def json_answer(body: Any, status: int = 200, headers: dict[str, str] | None = None) -> Canned:
    """A JSON answer (a message, or an error body with an error status)."""
    return Canned(status, json.dumps(body).encode(), {"content-type": "application/json", **(headers or {})})


def stream_answer(body: bytes, *, pieces: int = 0, broken: bool = False) -> Canned:
    """A streamed answer (`text/event-stream`); with `pieces`, the bytes arrive in pieces of that size."""
    chunks = [body[i : i + pieces] for i in range(0, len(body), pieces)] if pieces else [body]
    return Canned(200, headers={"content-type": "text/event-stream"}, chunks=chunks, broken=broken)


class _Body:
    """A response body as urllib3 would stream it: the chunks, then the end or a dropped connection."""

    def __init__(self, chunks: list[bytes], broken: bool) -> None:
        self._chunks = chunks
        self._broken = broken

    def stream(self, amt: int | None = None, decode_content: bool | None = None) -> Iterator[bytes]:
        yield from (chunk for chunk in self._chunks if chunk)
        if self._broken:
            raise ProtocolError("Connection broken: IncompleteRead(0 bytes read, 2 more expected)")

    def close(self) -> None:
        pass


class CannedAdapter(BaseAdapter):
    """Answers each request from the script (a Canned answer, or an exception to raise); keeps what was
    sent."""

    def __init__(self, *answers: Canned | Exception) -> None:
        super().__init__()
        self.answers = list(answers)
        self.requests: list[requests.PreparedRequest] = []
        self.options: list[dict[str, Any]] = []

    def send(self, request: requests.PreparedRequest, *args: Any, **kwargs: Any) -> requests.Response:
        self.requests.append(request)
        self.options.append(kwargs)
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer.response(request)

    def close(self) -> None:
        pass

    def bodies(self) -> list[dict[str, Any]]:
        """The JSON bodies sent, in order."""
        return [json.loads(request.body or b"{}") for request in self.requests]


def canned_model(
    *answers: Canned | Exception, max_retries: int = 0, timeout_seconds: float = 5.0, **kwargs: Any
) -> tuple[MessagesApiModel, CannedAdapter, list[float]]:
    """A MessagesApiModel whose session answers from `answers` (no sockets), the adapter, and its waits."""
    adapter = CannedAdapter(*answers)
    session = requests.Session()
    session.mount("https://", adapter)
    session.mount("http://", adapter)
    waits: list[float] = []
    model = MessagesApiModel(
        kwargs.pop("api_key", "sk-test-key"),
        kwargs.pop("base_url", None),
        timeout_seconds,
        max_retries,
        session=session,
        sleep=waits.append,
    )
    return model, adapter, waits
