"""A stand-in for Anthropic's Messages API: a real HTTP server on 127.0.0.1 with scripted answers.

It checks requests the way the real API does (roles alternate, tool results answer tool uses, no unknown
top-level fields) so that a malformed request fails a test instead of passing silently.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

ALLOWED_FIELDS = {
    "model",
    "max_tokens",
    "system",
    "messages",
    "tools",
    "tool_choice",
    "metadata",
    "stop_sequences",
    "stream",
    "thinking",
    "temperature",
    "top_p",
    "top_k",
    "service_tier",
}


@dataclass
class Scripted:
    """One scripted answer: a message body, or an HTTP error, optionally after a delay."""

    content: list[dict[str, Any]] = field(default_factory=list)
    stop_reason: str = "end_turn"
    status: int = 200
    error_type: str = ""
    delay: float = 0.0
    usage: dict[str, int] = field(default_factory=lambda: {"input_tokens": 12, "output_tokens": 7})


def text(answer: str, **usage: int) -> Scripted:
    """A plain text answer."""
    scripted = Scripted(content=[{"type": "text", "text": answer}])
    scripted.usage.update(usage)
    return scripted


def tool_use(*calls: tuple[str, dict[str, Any]], preface: str = "") -> Scripted:
    """An answer asking for one or more tool calls."""
    content: list[dict[str, Any]] = [{"type": "text", "text": preface}] if preface else []
    content += [
        {"type": "tool_use", "id": f"toolu_{next(_ids):06d}", "name": name, "input": args}
        for name, args in calls
    ]
    return Scripted(content=content, stop_reason="tool_use")


def error(status: int, error_type: str = "api_error") -> Scripted:
    """An HTTP error answer, e.g. error(529, "overloaded_error")."""
    return Scripted(status=status, error_type=error_type)


def hang(seconds: float) -> Scripted:
    """An answer that arrives too late (the client should time out first)."""
    return Scripted(content=[{"type": "text", "text": "too late"}], delay=seconds)


_ids = itertools.count(1)


class FakeAnthropic:
    """`with FakeAnthropic() as api:` then api.script(...) answers, api.requests holds what arrived.

    With nothing scripted it answers `default(request)` (by default: an echo of the newest user text).
    """

    def __init__(
        self, api_key: str = "test-anthropic-key", default: Callable[[dict[str, Any]], Scripted] | None = None
    ) -> None:
        self.api_key = api_key
        self.default = default or _echo
        self.requests: list[dict[str, Any]] = []
        self.rejected: list[str] = []
        self._script: deque[Scripted] = deque()
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> FakeAnthropic:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def script(self, *answers: Scripted) -> None:
        """Queue answers for the next requests, in order."""
        with self._lock:
            self._script.extend(answers)

    def reset(self) -> None:
        """Forget scripted answers and recorded requests; answer with the echo again."""
        with self._lock:
            self._script.clear()
            self.requests.clear()
            self.rejected.clear()
            self.default = _echo

    def always(self, answer: Scripted) -> None:
        """Answer every request (after the queued ones) with this."""
        self.default = lambda _request: answer

    def _next(self, request: dict[str, Any]) -> Scripted:
        with self._lock:
            if self._script:
                return self._script.popleft()
        return self.default(request)

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _send(self, status: int, body: dict[str, Any]) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("request-id", f"req_{next(_ids)}")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _error(self, status: int, error_type: str, message: str) -> None:
                self._send(status, {"type": "error", "error": {"type": error_type, "message": message}})

            def do_POST(self) -> None:
                if self.path.rstrip("/") != "/v1/messages":
                    self._error(404, "not_found_error", f"no route {self.path}")
                    return
                bearer = (self.headers.get("authorization") or "").removeprefix("Bearer ")
                if fake.api_key not in (self.headers.get("x-api-key"), bearer):
                    self._error(401, "authentication_error", "invalid API key")
                    return
                request = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))) or b"{}")
                problem = validate_request(request)
                if problem:
                    fake.rejected.append(problem)
                    self._error(400, "invalid_request_error", problem)
                    return
                with fake._lock:
                    fake.requests.append(request)
                answer = fake._next(request)
                if answer.delay:
                    time.sleep(answer.delay)
                if answer.status != 200:
                    self._error(answer.status, answer.error_type or "api_error", "scripted failure")
                    return
                self._send(
                    200,
                    {
                        "id": f"msg_{next(_ids):08d}",
                        "type": "message",
                        "role": "assistant",
                        "model": request["model"],
                        "content": answer.content,
                        "stop_reason": answer.stop_reason,
                        "stop_sequence": None,
                        "usage": {
                            "cache_creation_input_tokens": 0,
                            "cache_read_input_tokens": 0,
                            **answer.usage,
                        },
                    },
                )

        return Handler


def validate_request(request: dict[str, Any]) -> str | None:
    """The first reason the real API would reject this request, or None."""
    unknown = set(request) - ALLOWED_FIELDS
    if unknown:
        return f"unknown fields: {sorted(unknown)}"
    if not isinstance(request.get("model"), str) or not isinstance(request.get("max_tokens"), int):
        return "model and max_tokens are required"
    messages = request.get("messages")
    if not isinstance(messages, list) or not messages:
        return "messages: at least one message is required"
    if messages[0].get("role") != "user":
        return "messages: the first message must use the user role"
    pending_tool_ids: set[str] = set()
    for index, message in enumerate(messages):
        if index and message.get("role") == messages[index - 1].get("role"):
            return f"messages.{index}: roles must alternate"
        content = message.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        if not blocks:
            return f"messages.{index}: content must not be empty"
        for block in blocks:
            if block.get("type") == "text" and not str(block.get("text", "")).strip():
                return f"messages.{index}: text content blocks must be non-empty"
        results = {b.get("tool_use_id") for b in blocks if b.get("type") == "tool_result"}
        if pending_tool_ids and results != pending_tool_ids:
            return f"messages.{index}: tool_use ids were found without tool_result blocks"
        pending_tool_ids = {b["id"] for b in blocks if b.get("type") == "tool_use"}
    if pending_tool_ids:
        return "the last message has tool_use blocks without results"
    uses_tool_blocks = any(
        isinstance(m.get("content"), list)
        and any(b.get("type") in ("tool_use", "tool_result") for b in m["content"])
        for m in messages
    )
    if uses_tool_blocks and not request.get("tools"):
        return "Requests which include `tool_use` or `tool_result` blocks must define tools."
    names = [tool.get("name") for tool in request.get("tools") or []]
    if len(set(names)) != len(names) or not all(
        isinstance(t.get("input_schema"), dict) for t in request.get("tools") or []
    ):
        return "tools: names must be unique and each tool needs an input_schema"
    return None


def last_user_text(request: dict[str, Any]) -> str:
    """The newest user text in a request (for echoing)."""
    for message in reversed(request["messages"]):
        if message["role"] == "user":
            content = message["content"]
            if isinstance(content, str):
                return content
            texts = [b["text"] for b in content if b.get("type") == "text"]
            if texts:
                return str(texts[-1])
    return ""


def _echo(request: dict[str, Any]) -> Scripted:
    return text(f"You said: {last_user_text(request)}")
