"""The model port over Anthropic's Messages API (`POST /v1/messages`), spoken over urllib3.

Why not the SDK on this path: `import anthropic` costs about five times `import boto3` (its package
`__init__` loads every type module and the cloud clients before a caller can ask for less). Upstream the slow
import is an open issue (anthropics/anthropic-sdk-python#1211) whose maintainers declined a lazy-export
rewrite, and a cold start of CallModel pays it before the turn's first answer. urllib3 costs nothing more:
botocore has loaded it for the first boto3 client (`stepwise.aws.http_transport`), and Stepwise needs one
endpoint, with and without streaming.

So this client does by hand what the SDK (2.10) does for that endpoint: the same headers and body bytes
(server blocks sent back keep the API's key order, where the SDK's models reorder them: the same JSON), its
retry rules, its server-sent event decoding and its accumulation of a streamed message. tests/contract
(test_messages_api_contract.py) keeps it honest: it sends the same requests and responses through the SDK
and through this client, asserts that they agree, and validates each body with the SDK's own request types.
"""

from __future__ import annotations

import codecs
import json
import logging
import random
import time
from typing import TYPE_CHECKING, Any, cast

from urllib3.exceptions import HTTPError

from stepwise.aws.http_transport import HttpTransport, Response
from stepwise.model.errors import ModelPermanentError, ModelRateLimitedError, ModelTransientError
from stepwise.model.rate_limits import RATE_LIMIT_STATUS, retry_after_seconds
from stepwise.model.types import ModelRequest, ModelResponse, TextSink, Usage
from stepwise.model.web import SERVER_BLOCK_TYPES, WEB_FETCH_BETA, uses_web_fetch

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator, Mapping

    from stepwise.model.blocks import Citation, ResponseBlock, ServerBlock, TextBlock, ToolUseBlock

logger = logging.getLogger(__name__)

DEFAULT_BASE_URL = "https://api.anthropic.com"
# What anthropic 2.10 sends (`anthropic._constants.ANTHROPIC_API_VERSION`); the contract test compares them.
API_VERSION = "2026-10-21"
KEYLESS_PLACEHOLDER = "not-needed"  # compatible endpoints such as a local Ollama ignore the key
TRANSIENT_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504, 529})
PERMANENT_ERROR_TYPES = frozenset(
    {"invalid_request_error", "authentication_error", "permission_error", "not_found_error"}
)
# A long server-tool turn (web search) may stop with `pause_turn`: the paused content is sent back as the
# assistant's message and the model goes on. At most this many continuations per model step.
MAX_CONTINUATIONS = 3
# Retries within one call (`max_retries`, 0 by default: the state machine retries), timed as the SDK does.
INITIAL_RETRY_DELAY = 0.5
MAX_RETRY_DELAY = 8.0
MAX_RETRY_AFTER_SECONDS = 60.0  # a longer retry-after backs off instead (SDK 2.10 would sleep it all)
_TOOL_INPUT_BLOCKS = frozenset({"tool_use", "server_tool_use"})
_MAX_DETAIL_CHARS = 300


class MessagesApiModel:
    """ChatModel on the Messages API. `max_retries` retries within a call (408, 409, 429, 5xx and lost
    connections, as the SDK does); the state machine owns the retries with its own backoff, so it is low.
    `transport` carries the HTTP (its own by default; its pool is made on the first call)."""

    def __init__(
        self,
        api_key: str | None,
        base_url: str | None,
        timeout_seconds: float,
        max_retries: int,
        *,
        transport: HttpTransport | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        # As the SDK joins them: one trailing slash is dropped, and "/v1/messages" always follows.
        self._url = (base_url or DEFAULT_BASE_URL).removesuffix("/") + "/v1/messages"
        self._authorization = f"Bearer {api_key or KEYLESS_PLACEHOLDER}"
        self._timeout = timeout_seconds
        self._max_retries = max_retries
        self._http = transport if transport is not None else HttpTransport()
        self._sleep = sleep

    def __repr__(self) -> str:
        return f"MessagesApiModel(url={self._url!r})"

    def complete(self, request: ModelRequest, on_text: TextSink | None = None) -> ModelResponse:
        """One model step; with `on_text` it is streamed and its text passed on as it arrives. A response that
        stops with `pause_turn` is continued (its content sent back unchanged) up to MAX_CONTINUATIONS times;
        the step's content and usage are those of all its calls."""
        body = request_body(request, stream=on_text is not None)
        headers = self.request_headers(request)
        content: list[ResponseBlock] = []
        usage = Usage()
        for _ in range(MAX_CONTINUATIONS + 1):
            message = self._call(body, headers, on_text)
            content.extend(plain for block in message["content"] if (plain := _plain_block(block)))
            usage = usage.plus(_usage(message.get("usage")))
            stop_reason = str(message.get("stop_reason") or "end_turn")
            if stop_reason != "pause_turn" or not content:
                break
            body = {**body, "messages": [*request.messages, {"role": "assistant", "content": list(content)}]}
        model = str(message.get("model") or request.model)
        return ModelResponse(content=content, stop_reason=stop_reason, model=model, usage=usage)

    def request_headers(self, request: ModelRequest) -> dict[str, str]:
        """The API's headers for this request (the web fetch tool needs its beta header)."""
        headers = {
            "accept": "application/json",
            "content-type": "application/json",
            "anthropic-version": API_VERSION,
            "authorization": self._authorization,
        }
        if request.tools and uses_web_fetch(request.tools):
            headers["anthropic-beta"] = WEB_FETCH_BETA
        return headers

    def _call(
        self, body: dict[str, Any], headers: dict[str, str], on_text: TextSink | None
    ) -> dict[str, Any]:
        """One Messages API call (with its retries): the message, as the API's JSON."""
        deadline = time.monotonic() + self._timeout
        response = self._post(json_bytes(body), headers, stream=on_text is not None)
        with response:
            if on_text is None:
                return _message(response)
            return _streamed_message(response, on_text, deadline, self._timeout)

    def _post(self, payload: bytes, headers: dict[str, str], stream: bool) -> Response:
        """A 2xx response, after up to `max_retries` retries; the model port's errors otherwise."""
        for attempt in range(self._max_retries + 1):
            retries_left = self._max_retries - attempt
            try:
                response = self._http.request(
                    "POST",
                    self._url,
                    connect_timeout=self._timeout,
                    read_timeout=self._timeout,
                    headers=headers,
                    body=payload,
                    stream=stream,
                )
            except HTTPError as error:
                if retries_left <= 0:
                    raise ModelTransientError(f"model API unreachable: {type(error).__name__}") from error
                self._sleep(_backoff(attempt))
                continue
            if 200 <= response.status < 300:
                return response
            if retries_left > 0 and _should_retry(response):
                response.close()
                self._sleep(_retry_wait(attempt, response.headers))
                continue
            raise _status_error(response)
        raise AssertionError("unreachable: the last attempt returns or raises")


def request_body(request: ModelRequest, *, stream: bool) -> dict[str, Any]:
    """The JSON body the SDK sends for this request, keys in its order (`messages.create` without streaming,
    `messages.stream` with it)."""
    body: dict[str, Any] = {
        "max_tokens": request.max_tokens,
        "messages": request.messages,
        "model": request.model,
        "system": request.system,
    }
    if stream:
        if request.tools:
            body["tools"] = request.tools
        if request.tool_choice:
            body["tool_choice"] = request.tool_choice
        body["stream"] = True
    else:
        if request.tool_choice:
            body["tool_choice"] = request.tool_choice
        if request.tools:
            body["tools"] = request.tools
    return body


def json_bytes(body: Mapping[str, Any]) -> bytes:
    """The body as the SDK encodes it: compact, UTF-8 (not \\u escapes), no NaN."""
    return json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()


def _should_retry(response: Response) -> bool:
    """The SDK's rule: `x-should-retry` when the API sends it, else 408, 409, 429 and 5xx."""
    said = response.headers.get("x-should-retry")
    if said in ("true", "false"):
        return said == "true"
    return response.status in (408, 409, 429) or response.status >= 500


def _retry_wait(attempt: int, headers: Mapping[str, str]) -> float:
    """What the API asks for (`retry-after-ms`, `retry-after`) when it is at most a minute, else backoff."""
    asked = retry_after_seconds(headers)
    if asked is not None and 0 < asked <= MAX_RETRY_AFTER_SECONDS:
        return asked
    return _backoff(attempt)


def _backoff(attempt: int) -> float:
    """0.5 s doubling per retry up to 8 s, less up to a quarter of it (jitter), as the SDK waits."""
    return min(INITIAL_RETRY_DELAY * 2.0**attempt, MAX_RETRY_DELAY) * (1 - 0.25 * random.random())


def _status_error(response: Response) -> ModelTransientError | ModelPermanentError:
    """The model port's error for an HTTP error answer, with the SDK's message (`Error code: 400 - {...}`)."""
    status = response.status
    try:
        text = _text(response.body(), response.headers.get("content-type", "")).strip()
    except HTTPError as error:
        return ModelTransientError(
            f"model API answered HTTP {status}, then broke off: {type(error).__name__}"
        )
    try:
        message = f"Error code: {status} - {json.loads(text)}"
    except ValueError:
        message = text or f"Error code: {status}"
    detail = f"model API answered HTTP {status}: {_short(message)}"
    retry_after = retry_after_seconds(response.headers)
    if status in RATE_LIMIT_STATUS and retry_after is not None:
        return ModelRateLimitedError(f"{detail} (retry after {retry_after:g} s)", retry_after)
    if status in TRANSIENT_STATUS or status >= 500:
        return ModelTransientError(detail)
    return ModelPermanentError(detail)


def _message(response: Response) -> dict[str, Any]:
    """The message of a non-streamed answer."""
    try:
        message = json.loads(_text(response.body(), response.headers.get("content-type", "")))
    except ValueError as error:
        raise ModelTransientError("model API answered without a JSON message") from error
    if not isinstance(message, dict) or not isinstance(message.get("content"), list):
        raise ModelTransientError("model API answered with JSON that is not a message")
    return message


def _streamed_message(
    response: Response, on_text: TextSink, deadline: float, timeout_seconds: float
) -> dict[str, Any]:
    """The final message of a streamed answer; text deltas go to `on_text` (tool input JSON does not).

    Only a stream that reached `message_stop` counts: one that broke off (the connection dropped, an `error`
    event such as `overloaded_error`, or longer than the call's timeout in all) raises, so a half answer never
    becomes the turn's reply.
    """
    stream = _MessageStream()
    finished = False
    try:
        for name, data in _sse_events(response.chunks(None)):
            if name in (None, "ping"):
                continue
            if name == "error":
                raise _stream_error(data, response.status)
            if not data:
                continue
            piece = stream.add(data)
            finished = finished or stream.stopped
            if time.monotonic() > deadline:
                raise ModelTransientError(f"model stream still running after {timeout_seconds:g}s")
            if piece is not None:
                on_text(piece)
                if time.monotonic() > deadline:
                    raise ModelTransientError(f"model stream still running after {timeout_seconds:g}s")
    except HTTPError as error:
        raise ModelTransientError(f"model stream broke off: {type(error).__name__}") from error
    if not finished:
        raise ModelTransientError("model stream ended before message_stop")
    return stream.final()


def _stream_error(data: str, status: int) -> ModelTransientError | ModelPermanentError:
    """The model port's error for an `error` event (e.g. `overloaded_error` after the answer began)."""
    body: Any = data
    try:
        body = json.loads(data)
        message = f"{body}"
    except ValueError:
        message = data or f"Error code: {status}"
    detail = f"model stream sent an error: {_short(message)}"
    error = body.get("error") if isinstance(body, dict) else None
    kind = str(error.get("type", "")) if isinstance(error, dict) else ""
    return (ModelPermanentError if kind in PERMANENT_ERROR_TYPES else ModelTransientError)(detail)


class _MessageStream:
    """Builds the message from its stream events the way the SDK's MessageStream accumulates it."""

    def __init__(self) -> None:
        self.message: dict[str, Any] | None = None
        self.stopped = False
        self._tool_json: dict[int, list[str]] = {}

    def add(self, data: str) -> str | None:
        """Take one event's data (JSON); returns the text it adds to a text block, if it is a text delta."""
        try:
            event = json.loads(data)
        except ValueError as error:
            raise ModelTransientError("model stream sent an event that is not JSON") from error
        kind = event.get("type") if isinstance(event, dict) else None
        if self.message is None:
            if kind != "message_start" or not isinstance(event.get("message"), dict):
                raise ModelTransientError(f"model stream sent {kind!r} before message_start")
            self.message = {**event["message"]}
            self.message["content"] = [dict(block) for block in self.message.get("content") or []]
            self.message["usage"] = dict(self.message.get("usage") or {})
            return None
        try:
            return self._apply(kind, event)
        except (IndexError, KeyError, TypeError, AttributeError) as error:
            raise ModelTransientError(f"model stream sent a malformed {kind} event") from error

    def _apply(self, kind: object, event: dict[str, Any]) -> str | None:
        assert self.message is not None
        content: list[dict[str, Any]] = self.message["content"]
        if kind == "content_block_start":
            content.append(dict(event["content_block"]))
        elif kind == "content_block_delta":
            return self._delta(event["index"], content[event["index"]], event["delta"])
        elif kind == "message_delta":
            delta, usage = event.get("delta") or {}, event.get("usage") or {}
            self.message["stop_reason"] = delta.get("stop_reason")
            self.message["stop_sequence"] = delta.get("stop_sequence")
            if "output_tokens" in usage:
                self.message["usage"]["output_tokens"] = usage["output_tokens"]
            # Counts on a message_delta are totals (they replace); absent ones keep message_start's value.
            for key in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"):
                if usage.get(key) is not None:
                    self.message["usage"][key] = usage[key]
            if usage.get("server_tool_use") is not None:
                self.message["usage"]["server_tool_use"] = usage["server_tool_use"]
        elif kind == "message_stop":
            self.stopped = True
        return None  # content_block_stop, ping-like and unknown events change nothing

    def _delta(self, index: int, block: dict[str, Any], delta: dict[str, Any]) -> str | None:
        kind, block_type = delta.get("type"), block.get("type")
        if kind == "text_delta" and block_type == "text":
            piece = str(delta["text"])
            block["text"] = str(block.get("text") or "") + piece
            return piece
        if kind == "input_json_delta" and block_type in _TOOL_INPUT_BLOCKS:
            self._tool_json.setdefault(index, []).append(str(delta["partial_json"]))
        elif kind == "citations_delta" and block_type == "text":
            block["citations"] = [*(block.get("citations") or []), delta["citation"]]
        elif kind == "thinking_delta" and block_type == "thinking":
            block["thinking"] = str(block.get("thinking") or "") + str(delta["thinking"])
        elif kind == "signature_delta" and block_type == "thinking":
            block["signature"] = delta["signature"]
        return None

    def final(self) -> dict[str, Any]:
        """The whole message: each tool input is its pieces of JSON joined and parsed (as given when none)."""
        assert self.message is not None
        for index, pieces in self._tool_json.items():
            joined = "".join(pieces)
            if not joined:
                continue
            try:
                self.message["content"][index]["input"] = json.loads(joined)
            except ValueError as error:
                raise ModelTransientError("model stream sent tool input that is not JSON") from error
        return self.message


def _sse_events(chunks: Iterable[bytes]) -> Iterator[tuple[str | None, str]]:
    """(event name or None, data) of each server-sent event, decoded as the SDK's SSEDecoder decodes them:
    lines end at \\r, \\n or \\r\\n; a blank line ends an event; an unfinished last event is dropped."""
    name: str | None = None
    data: list[str] = []
    for block in _event_blocks(chunks):
        for raw in block.splitlines():
            line = raw.decode("utf-8", errors="replace")
            if not line:
                if name or data:
                    yield name or None, "\n".join(data)
                name, data = None, []
                continue
            if line.startswith(":"):
                continue
            field, _, value = line.partition(":")
            value = value.removeprefix(" ")
            if field == "event":
                name = value
            elif field == "data":
                data.append(value)


def _event_blocks(chunks: Iterable[bytes]) -> Iterator[bytes]:
    """The bytes of the stream cut after each blank line (whatever the network's chunks were)."""
    pending = b""
    for chunk in chunks:
        for line in chunk.splitlines(keepends=True):
            pending += line
            if pending.endswith((b"\r\r", b"\n\n", b"\r\n\r\n")):
                yield pending
                pending = b""
    if pending:
        yield pending


def _usage(usage: object) -> Usage:
    """The call's token counts, and its web searches and fetches (`usage.server_tool_use`)."""
    counts: dict[str, Any] = usage if isinstance(usage, dict) else {}
    server = counts.get("server_tool_use")
    server = server if isinstance(server, dict) else {}
    return Usage(
        input_tokens=counts.get("input_tokens") or 0,
        output_tokens=counts.get("output_tokens") or 0,
        cache_read_input_tokens=counts.get("cache_read_input_tokens") or 0,
        cache_creation_input_tokens=counts.get("cache_creation_input_tokens") or 0,
        web_search_requests=server.get("web_search_requests") or 0,
        web_fetch_requests=server.get("web_fetch_requests") or 0,
    )


def _plain_block(block: object) -> ResponseBlock | None:
    """Keep only what a later request may send back (non-empty text, with its citations; tool_use with its id
    and name; the web tools' blocks), as plain JSON. Citations and the web tools' blocks are kept as the API
    gave them: they become typed here, unchecked beyond their `type`."""
    if not isinstance(block, dict):
        return None
    kind = block.get("type")
    if kind == "text":
        if not block.get("text"):
            return None
        text: TextBlock = {"type": "text", "text": block["text"]}
        citations = block.get("citations")
        if citations:
            text["citations"] = [
                cast("Citation", dict(citation)) for citation in citations if isinstance(citation, dict)
            ]
        return text
    if kind == "tool_use" and isinstance(block.get("id"), str) and isinstance(block.get("name"), str):
        tool_input = block.get("input")
        call: ToolUseBlock = {
            "type": "tool_use",
            "id": block["id"],
            "name": block["name"],
            "input": dict(tool_input) if isinstance(tool_input, dict) else {},
        }
        return call
    if kind in SERVER_BLOCK_TYPES:  # sent back exactly as received (the fields the API gave)
        return cast("ServerBlock", dict(block))
    logger.info("dropping unsupported content block", extra={"block_type": kind})
    return None


def _text(content: bytes, content_type: str) -> str:
    """A body as text: its charset when the content type names a known one, else UTF-8 (as httpx reads)."""
    charset = "utf-8"
    for parameter in content_type.split(";")[1:]:
        key, _, value = parameter.partition("=")
        if key.strip().lower() == "charset" and value.strip(" \"'"):
            charset = value.strip(" \"'")
    try:
        codecs.lookup(charset)
    except LookupError:
        charset = "utf-8"
    return content.decode(charset, errors="replace")


def _short(text: str, limit: int = _MAX_DETAIL_CHARS) -> str:
    return text if len(text) <= limit else text[:limit] + "…"
