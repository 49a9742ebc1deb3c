"""A stand-in for Anthropic's Messages API: a real HTTP server on 127.0.0.1 with scripted answers.

It checks requests the way the real API does (roles alternate, tool results answer tool uses, no unknown
top-level fields or block types, at most 4 cache breakpoints, images and documents with valid sources within
their limits) so that a malformed request fails a test instead of passing
silently, and it applies the API's prompt-caching rules (see `PromptCache`) to report the usage the real API
would report for the same sequence of requests. A request with `"stream": true` gets the answer as
server-sent events (`stream_events`), which a scripted answer can break off mid-way (`broken`).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import itertools
import json
import math
import re
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from stepwise.prompt.system import is_turn_context
from stepwise_local import fake_web

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


# Content blocks a request may carry (the ones Stepwise sends, and the assistant's own), and the file limits.
BLOCK_TYPES = frozenset(
    {"text", "image", "document", "tool_use", "tool_result", "thinking", "redacted_thinking"}
    | fake_web.SERVER_BLOCK_TYPES
)
IMAGE_MEDIA_TYPES = {  # media type -> how its bytes start (the API refuses an image that is not what it says)
    "image/jpeg": (b"\xff\xd8\xff",),
    "image/png": (b"\x89PNG\r\n\x1a\n",),
    "image/gif": (b"GIF87a", b"GIF89a"),
    "image/webp": (b"RIFF",),
}
MAX_IMAGE_BASE64 = 5 * 1024 * 1024  # per image, counted in base64 characters
MAX_REQUEST_BYTES = 32 * 1024 * 1024


@dataclass
class Scripted:
    """One scripted answer: a message body, or an HTTP error, optionally after a delay."""

    content: list[dict[str, Any]] = field(default_factory=list)
    stop_reason: str = "end_turn"
    status: int = 200
    error_type: str = ""
    delay: float = 0.0
    usage: dict[str, int] = field(default_factory=dict)  # overrides the computed usage, key by key
    # Streamed answers (`"stream": true`): seconds between events, and the event after which the stream breaks
    # off: the connection drops, or an `error` event of type `break_with` ends it.
    pace: float = 0.0
    break_after: int | None = None
    break_with: str = ""
    headers: dict[str, str] = field(default_factory=dict)  # extra response headers (retry-after)


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


def web_search(
    query: str, answer: str, results: list[tuple[str, str, str]] | None = None, cite: int = 0
) -> Scripted:
    """An answer that searched the web (`results`: (url, title, text); made-up ones by default) and cites
    result `cite` in its text, with `usage.server_tool_use.web_search_requests` = 1."""
    found = results or fake_web.local_results(query)
    url, title, page = found[cite]
    return Scripted(
        content=[
            *fake_web.search_blocks(query, found),
            {"type": "text", "text": answer, "citations": [fake_web.search_citation(url, title, page)]},
        ]
    )


def web_fetch(
    url: str, title: str, page: str, answer: str = "", calls: tuple[tuple[str, dict[str, Any]], ...] = ()
) -> Scripted:
    """An answer that fetched `url` (the page's text `page`), then says `answer` and/or asks for `calls`."""
    content = [*fake_web.fetch_blocks(url, title, page)]
    content += [{"type": "text", "text": answer}] if answer else []
    asked = tool_use(*calls).content if calls else []
    return Scripted(content=content + asked, stop_reason="tool_use" if asked else "end_turn")


def paused(answer: Scripted) -> Scripted:
    """The answer with `stop_reason: pause_turn`, as a long server-tool turn pauses."""
    answer.stop_reason = "pause_turn"
    return answer


def error(status: int, error_type: str = "api_error") -> Scripted:
    """An HTTP error answer, e.g. error(529, "overloaded_error")."""
    return Scripted(status=status, error_type=error_type)


def broken(answer: Scripted, after: int = 4, error_type: str = "") -> Scripted:
    """The answer, streamed but breaking off after `after` events: the connection drops, or with
    `error_type` (e.g. "overloaded_error") an `error` event ends the stream. Without streaming it is a 529."""
    answer.break_after, answer.break_with = after, error_type
    return answer


def rate_limited(retry_after: str, status: int = 429) -> Scripted:
    """A 429 (or 529) with a retry-after header, as the API sends when a rate limit is hit."""
    error_type = "overloaded_error" if status == 529 else "rate_limit_error"
    return Scripted(status=status, error_type=error_type, headers={"retry-after": retry_after})


def hang(seconds: float) -> Scripted:
    """An answer that arrives too late (the client should time out first)."""
    return Scripted(content=[{"type": "text", "text": "too late"}], delay=seconds)


_ids = itertools.count(1)

# Prompt caching, as the real API does it (checked 2026-11).
MIN_CACHEABLE_TOKENS = {"claude-haiku-4-5": 4096, "claude-sonnet-4-5": 1024}
DEFAULT_MIN_CACHEABLE_TOKENS = 1024  # models not listed above (an assumption, not a checked fact)
CACHE_LIFETIME_SECONDS = {"5m": 300.0, "1h": 3600.0}
MAX_BREAKPOINTS = 4


def approx_tokens(value: Any) -> int:
    """The fake's token count: characters / 4, rounded up, of the value's compact JSON (sorted keys).

    Deterministic, and close enough to the real tokenizer's counts for English text and JSON to reason about
    cache minimums and shares; the real API's counts differ by some percent (and add a few per message).
    """
    return math.ceil(len(json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))) / 4)


def min_cacheable_tokens(model: str) -> int:
    """The shortest prefix the model caches (dated ids such as claude-haiku-4-5-20251001 count as theirs)."""
    for name, minimum in MIN_CACHEABLE_TOKENS.items():
        if model == name or model.startswith(f"{name}-"):
            return minimum
    return DEFAULT_MIN_CACHEABLE_TOKENS


@dataclass
class _Unit:
    """One block of the prompt prefix: its hash chained with everything before it, and its token count."""

    digest: str
    tokens: int
    ttl: str | None  # the cache breakpoint's lifetime, when the block carries one


def prefix_units(request: dict[str, Any]) -> list[_Unit]:
    """The request's prompt in cache order: tools, then system, then messages, one unit per block.

    `cache_control` itself is not part of what is compared. `tool_choice` and `thinking` sit between system
    and messages, so changing them invalidates cached messages but not cached tools and system, as documented.
    """
    # (what is compared, what is counted, its cache_control)
    blocks: list[tuple[dict[str, Any], dict[str, Any] | None, dict[str, Any] | None]] = []
    for tool in request.get("tools") or []:
        plain = _without_cache_control(tool)
        blocks.append(({"tool": plain}, plain, tool.get("cache_control")))
    system = request.get("system") or []
    for block in [{"type": "text", "text": system}] if isinstance(system, str) else system:
        plain = _without_cache_control(block)
        blocks.append(({"system": plain}, plain, block.get("cache_control")))
    blocks.append(
        ({"tool_choice": request.get("tool_choice"), "thinking": request.get("thinking")}, None, None)
    )
    for index, message in enumerate(request.get("messages") or []):
        content = message.get("content")
        for block in [{"type": "text", "text": content}] if isinstance(content, str) else content or []:
            plain = _without_cache_control(block)
            compared = {"message": index, "role": message.get("role"), "block": plain}
            blocks.append((compared, plain, block.get("cache_control")))
    units: list[_Unit] = []
    chain = hashlib.sha256()
    for compared, counted, cache_control in blocks:
        chain.update(json.dumps(compared, sort_keys=True, separators=(",", ":")).encode())
        ttl = str(cache_control.get("ttl", "5m")) if cache_control else None
        units.append(_Unit(chain.hexdigest(), approx_tokens(counted) if counted is not None else 0, ttl))
    return units


def _without_cache_control(block: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in block.items() if key != "cache_control"}


class PromptCache:
    """The API's prompt cache for one organization, with its rules:

    - a breakpoint (`cache_control` on a tool, system block or message block) caches the prompt prefix that
      ends with that block, in the order tools, system, messages; at most 4 per request;
    - only prefixes of at least the model's minimum are cached (4,096 tokens for claude-haiku-4-5, 1,024 for
      claude-sonnet-4-5); shorter ones are billed as plain input, without an error;
    - an entry lives five minutes (or an hour with `"ttl": "1h"`), and each read starts its lifetime again;
    - a read needs a byte-identical prefix up to one of the request's breakpoints (the longest such hit is
      read). The real API also looks for hits at up to about 20 earlier block boundaries; this fake reads only
      at breakpoints, so it never reports a hit the real API would miss;
    - usage: `cache_read_input_tokens` is the prefix read, `cache_creation_input_tokens` what was written
      after it up to the last cacheable breakpoint, and `input_tokens` the uncached rest.
    """

    def __init__(self) -> None:
        self._entries: dict[tuple[str, str], tuple[float, str]] = {}  # (model, digest) -> (expires, ttl)

    def clear(self) -> None:
        self._entries.clear()

    def account(self, request: dict[str, Any], now: float) -> dict[str, int]:
        """Read and write the cache for one request at time `now` (seconds); returns its input usage."""
        model = str(request.get("model"))
        units = prefix_units(request)
        total, cumulative, breakpoints = 0, [], []
        for index, unit in enumerate(units):
            total += unit.tokens
            cumulative.append(total)
            if unit.ttl is not None:
                breakpoints.append(index)
        read, read_index = 0, -1
        for index in reversed(breakpoints):
            entry = self._entries.get((model, units[index].digest))
            if entry and entry[0] > now:
                read, read_index = cumulative[index], index
                self._entries[(model, units[index].digest)] = (
                    now + CACHE_LIFETIME_SECONDS[entry[1]],
                    entry[1],
                )
                break
        written = read
        for index in breakpoints:
            ttl = units[index].ttl or "5m"
            if index > read_index and cumulative[index] >= min_cacheable_tokens(model):
                self._entries[(model, units[index].digest)] = (now + CACHE_LIFETIME_SECONDS[ttl], ttl)
                written = cumulative[index]
        return {
            "input_tokens": total - written,
            "cache_read_input_tokens": read,
            "cache_creation_input_tokens": written - read,
        }


@dataclass
class Answered:
    """The fake's answer to one request: a status and a JSON body (an error, or the message), or, when
    `streamed` is set, the message to stream as that scripted answer says (its pace, where it breaks off)."""

    status: int
    body: dict[str, Any]
    headers: dict[str, str] = field(default_factory=dict)
    streamed: Scripted | None = None


def _api_error(status: int, error_type: str, message: str, headers: dict[str, str] | None = None) -> Answered:
    return Answered(
        status, {"type": "error", "error": {"type": error_type, "message": message}}, headers or {}
    )


class FakeAnthropic:
    """`with FakeAnthropic() as api:` then api.script(...) answers, api.requests holds what arrived.

    With nothing scripted it answers `default(request)` (by default: an echo of the newest user text).
    """

    def __init__(
        self,
        api_key: str = "test-anthropic-key",
        default: Callable[[dict[str, Any]], Scripted] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.api_key = api_key
        self.default = default or _echo
        self.clock = clock  # seconds; the prompt cache's lifetimes run on it (tests may move it by hand)
        self.cache = PromptCache()
        self.requests: list[dict[str, Any]] = []
        self.usages: list[dict[str, int]] = []  # the usage of each answered request, in order
        self.rejected: list[str] = []
        self.given: dict[str, str] = {}  # the server tool blocks given out, to check they come back unchanged
        self._script: deque[Scripted] = deque()
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None  # made by `with`; `answer` needs none

    @property
    def base_url(self) -> str:
        if self._server is None:
            raise RuntimeError("FakeAnthropic is not serving: use it as `with FakeAnthropic() as api:`")
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> FakeAnthropic:
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._server.daemon_threads = True
        # serve_forever looks for shutdown() every 0.05 s (0.5 by default: stopping would wait that long)
        threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def wait_for_requests(self, count: int, timeout: float = 30.0) -> None:
        """Wait until `count` requests have arrived (a delayed answer is then on its way)."""
        deadline = time.monotonic() + timeout
        while len(self.requests) < count:
            if time.monotonic() > deadline:
                raise TimeoutError(f"{len(self.requests)} of {count} model requests within {timeout}s")
            time.sleep(0.005)

    def script(self, *answers: Scripted) -> None:
        """Queue answers for the next requests, in order."""
        with self._lock:
            self._script.extend(answers)

    def reset(self) -> None:
        """Forget scripted answers, recorded requests and the prompt cache; answer with the echo again."""
        with self._lock:
            self._script.clear()
            self.requests.clear()
            self.usages.clear()
            self.rejected.clear()
            self.given.clear()
            self.cache.clear()
            self.default = _echo

    def always(self, answer: Scripted) -> None:
        """Answer every request (after the queued ones) with this."""
        self.default = lambda _request: answer

    def _next(self, request: dict[str, Any]) -> Scripted:
        with self._lock:
            if self._script:
                return self._script.popleft()
        return self.default(request)

    def answer(self, path: str, headers: Mapping[str, str], raw: bytes) -> Answered:
        """Answer one request (`POST path` with these headers and body bytes) as the API would: an error, a
        message, or a message to stream (`Answered.streamed`). The HTTP server answers with it, and so can an
        in-process transport (tests/support/in_process_http.py)."""
        if path.rstrip("/") != "/v1/messages":
            return _api_error(404, "not_found_error", f"no route {path}")
        bearer = (headers.get("authorization") or "").removeprefix("Bearer ")
        if self.api_key not in (headers.get("x-api-key"), bearer):
            return _api_error(401, "authentication_error", "invalid API key")
        if len(raw) > MAX_REQUEST_BYTES:
            return _api_error(
                413, "request_too_large", "Request exceeds the maximum allowed number of bytes."
            )
        request = json.loads(raw or b"{}")
        problem = validate_request(request) or fake_web.check_server_tools(
            request, headers.get("anthropic-beta") or ""
        )
        with self._lock:
            problem = problem or fake_web.check_resent(request, self.given)
        if problem:
            self.rejected.append(problem)
            return _api_error(400, "invalid_request_error", problem)
        with self._lock:
            self.requests.append(request)
        answer = self._next(request)
        if answer.delay:
            time.sleep(answer.delay)
        if answer.status != 200:
            return _api_error(
                answer.status, answer.error_type or "api_error", "scripted failure", answer.headers
            )
        missing = set(fake_web.uses_of(answer.content)) - set(fake_web.offered(request))
        if missing:  # the real API never uses a server tool the request does not offer
            problem = f"scripted answer uses {sorted(missing)}, which the request does not offer"
            self.rejected.append(problem)
            return _api_error(400, "invalid_request_error", problem)
        if answer.break_after is not None and not request.get("stream"):
            return _api_error(529, "overloaded_error", "scripted failure (a broken stream, not streamed)")
        with self._lock:
            usage = self.cache.account(request, self.clock())
            usage = {**usage, "output_tokens": approx_tokens(answer.content), **answer.usage}
            if fake_web.uses_of(answer.content):
                usage["server_tool_use"] = fake_web.server_usage(answer.content)  # type: ignore[assignment]
            self.usages.append(usage)
            for block in answer.content:
                if (key := fake_web.block_key(block)) is not None:
                    self.given[key] = fake_web.canonical(block)
        message = {
            "id": f"msg_{next(_ids):08d}",
            "type": "message",
            "role": "assistant",
            "model": request["model"],
            "content": answer.content,
            "stop_reason": answer.stop_reason,
            "stop_sequence": None,
            "usage": usage,
        }
        return Answered(200, message, streamed=answer if request.get("stream") else None)

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _send(self, status: int, body: dict[str, Any], headers: dict[str, str] | None = None) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.send_header("request-id", f"req_{next(_ids)}")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("content-length", 0)))
                answered = fake.answer(self.path, self.headers, raw)
                if answered.streamed is None:
                    self._send(answered.status, answered.body, answered.headers)
                    return
                try:
                    self._stream(answered.body, answered.streamed)
                except (BrokenPipeError, ConnectionResetError):  # the client stopped reading
                    self.close_connection = True

            def _stream(self, message: dict[str, Any], answer: Scripted) -> None:
                """Server-sent events in chunked encoding, as the API streams; the connection closes after."""
                self.protocol_version = "HTTP/1.1"  # for chunked encoding; `Connection: close` ends it
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("transfer-encoding", "chunked")
                self.send_header("connection", "close")
                self.send_header("request-id", f"req_{next(_ids)}")
                self.end_headers()
                self.close_connection = True
                events, drops = scripted_stream(message, answer)
                for event in events:
                    self.wfile.write(f"{len(event):x}\r\n".encode() + event + b"\r\n")
                    if answer.pace:
                        time.sleep(answer.pace)
                if not drops:  # else the connection drops without the final chunk: the body is incomplete
                    self.wfile.write(b"0\r\n\r\n")

        return Handler


def scripted_stream(message: dict[str, Any], answer: Scripted) -> tuple[list[bytes], bool]:
    """The server-sent events of a streamed answer, each as sent in one chunk, as the scripted answer has
    them: all of them, or up to `break_after`, then an `error` event (`break_with`) or, when the second value
    is True, a dropped connection."""
    events = []
    for index, (name, data) in enumerate(stream_events(message)):
        if index == answer.break_after:
            if not answer.break_with:
                return events, True
            name, data = (
                "error",
                {
                    "type": "error",
                    "error": {"type": answer.break_with, "message": "scripted failure mid-stream"},
                },
            )
            events.append(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())
            break
        events.append(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())
    return events, False


def stream_events(message: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """The SSE events of a streamed answer: message_start (the input usage), a ping, each content block as
    start, deltas (text a few words at a time, tool input as pieces of JSON) and stop, then message_delta
    (stop reason, output tokens) and message_stop."""
    usage = message["usage"]
    start = {**message, "content": [], "stop_reason": None, "usage": {**usage, "output_tokens": 1}}
    events: list[tuple[str, dict[str, Any]]] = [
        ("message_start", {"type": "message_start", "message": start}),
        ("ping", {"type": "ping"}),
    ]
    for index, block in enumerate(message["content"]):
        pieces: list[tuple[str, str, Any]]
        if block["type"] in ("tool_use", "server_tool_use"):
            opening = {**block, "input": {}}
            pieces = [
                ("input_json_delta", "partial_json", p) for p in _pieces(json.dumps(block["input"]), 12)
            ]
        elif block["type"] != "text":  # a server tool's result arrives whole
            opening, pieces = block, []
        else:
            opening = {**block, "text": ""}
            if "citations" in block:
                opening["citations"] = []
            pieces = [("citations_delta", "citation", c) for c in block.get("citations") or []]
            pieces += [
                ("text_delta", "text", p) for p in re.findall(r"\s*\S+(?:\s+\S+){0,2}\s*", block["text"])
            ]
        events.append(
            ("content_block_start", {"type": "content_block_start", "index": index, "content_block": opening})
        )
        for delta_type, key, piece in pieces:
            delta = {"type": "content_block_delta", "index": index, "delta": {"type": delta_type, key: piece}}
            events.append(("content_block_delta", delta))
        events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    delta = {"stop_reason": message["stop_reason"], "stop_sequence": None}
    events.append(
        (
            "message_delta",
            {"type": "message_delta", "delta": delta, "usage": {"output_tokens": usage["output_tokens"]}},
        )
    )
    events.append(("message_stop", {"type": "message_stop"}))
    return events


def _pieces(text: str, size: int) -> list[str]:
    return [text[start : start + size] for start in range(0, len(text), size)]


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
        for position, block in enumerate(blocks):
            if block.get("type") == "text" and not str(block.get("text", "")).strip():
                return f"messages.{index}: text content blocks must be non-empty"
            problem = check_block(block, f"messages.{index}.content.{position}")
            if problem:
                return problem
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
    problem = _check_cache_control(request)
    if problem:
        return problem
    names = [tool.get("name") for tool in request.get("tools") or []]
    custom = [t for t in request.get("tools") or [] if t.get("type") in (None, "custom")]
    if len(set(names)) != len(names) or not all(isinstance(t.get("input_schema"), dict) for t in custom):
        return "tools: names must be unique and each tool needs an input_schema"
    return None


def check_block(block: dict[str, Any], where: str) -> str | None:
    """Why the API would refuse this content block (its type, an image's or document's source), or None."""
    kind = block.get("type")
    if kind not in BLOCK_TYPES:
        return f"{where}.type: unknown content block type {kind!r}"
    if kind == "image":
        return _check_image(block.get("source"), f"{where}.image.source")
    if kind == "document":
        return _check_document(block.get("source"), f"{where}.document.source")
    return None


def _check_image(source: Any, where: str) -> str | None:
    if not isinstance(source, dict) or source.get("type") != "base64":
        return f"{where}: expected a base64 source"
    starts = IMAGE_MEDIA_TYPES.get(str(source.get("media_type")))
    if starts is None:
        return f"{where}.media_type: Input should be one of {sorted(IMAGE_MEDIA_TYPES)}"
    data = _decoded(source.get("data"))
    if data is None:
        return f"{where}.data: invalid base64 data"
    if len(str(source["data"])) > MAX_IMAGE_BASE64:
        return f"{where}: image exceeds 5 MB maximum"
    if not data.startswith(starts):
        return f"{where}.data: the image does not appear to be {source['media_type']}"
    return None


def _check_document(source: Any, where: str) -> str | None:
    if not isinstance(source, dict):
        return f"{where}: Field required"
    if source.get("type") == "base64":
        if source.get("media_type") != "application/pdf":
            return f"{where}.media_type: Input should be 'application/pdf'"
        data = _decoded(source.get("data"))
        if data is None or not data.startswith(b"%PDF-"):
            return f"{where}.data: the PDF specified was not valid"
        return None
    if source.get("type") == "text":
        if source.get("media_type") != "text/plain" or not isinstance(source.get("data"), str):
            return f"{where}: a text source needs media_type 'text/plain' and string data"
        return None if source["data"] else f"{where}.data: text documents must be non-empty"
    return f"{where}.type: Input should be 'base64', 'text', 'content' or 'url'"


def _decoded(data: Any) -> bytes | None:
    if not isinstance(data, str):
        return None
    try:
        return base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return None


def _check_cache_control(request: dict[str, Any]) -> str | None:
    system = request.get("system")
    blocks = [*(request.get("tools") or []), *(system if isinstance(system, list) else [])]
    for message in request.get("messages") or []:
        if isinstance(message.get("content"), list):
            blocks.extend(message["content"])
    marks = [block["cache_control"] for block in blocks if "cache_control" in block]
    if len(marks) > MAX_BREAKPOINTS:
        return (
            f"A maximum of {MAX_BREAKPOINTS} blocks with cache_control may be provided. Found {len(marks)}."
        )
    for mark in marks:
        if not isinstance(mark, dict) or mark.get("type") != "ephemeral":
            return "cache_control.type: Input should be 'ephemeral'"
        if mark.get("ttl", "5m") not in CACHE_LIFETIME_SECONDS:
            return "cache_control.ttl: Input should be '5m' or '1h'"
    return None


def last_user_text(request: dict[str, Any]) -> str:
    """The newest user text in a request (for echoing), leaving out Stepwise's per-turn context block."""
    for message in reversed(request["messages"]):
        if message["role"] == "user":
            content = message["content"]
            if isinstance(content, str):
                return content
            texts = [b["text"] for b in content if b.get("type") == "text" and not is_turn_context(b)]
            if texts:
                return str(texts[-1])
    return ""


def context_text(request: dict[str, Any]) -> str:
    """The per-turn context Stepwise appends to the newest user message (time, summary, memories), or ""."""
    content = request["messages"][-1]["content"] if request.get("messages") else ""
    blocks = content if isinstance(content, list) else []
    return "\n\n".join(str(b["text"]) for b in blocks if is_turn_context(b))


def _echo(request: dict[str, Any]) -> Scripted:
    """The default answer: an echo, or, when the request offers web search and the message asks for
    something found on the web ("search…", "weather…"), a search over made-up results that cites one."""
    said = last_user_text(request)
    if "web_search" in fake_web.offered(request) and fake_web.wants_search(said):
        return web_search(said, f"Here is what I found on the web about: {said}")
    return text(f"You said: {said}")


def slow_echo(seconds: float) -> Callable[[dict[str, Any]], Scripted]:
    """A default answer: the echo, after a delay (keeps a turn busy while a test sends more messages)."""

    def answer(request: dict[str, Any]) -> Scripted:
        echo = _echo(request)
        echo.delay = seconds
        return echo

    return answer
