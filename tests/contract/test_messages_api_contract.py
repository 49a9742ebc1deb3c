"""The lean Messages API client (`stepwise.model.messages_api`) agrees with Anthropic's SDK.

Production calls the API without the SDK (its import costs a cold start about five times `import boto3`), so
this is where the SDK still has its say. Both clients (`MessagesApiModel`, and `SdkModel` on the SDK) talk
to the same recording server on 127.0.0.1:

- requests: for each kind of request Stepwise sends, both send the same bytes to the same path with the same
  API headers, and the SDK's own request types accept the body;
- responses: for a corpus of answers (messages, streams of them, streams that break, error statuses), both
  make the same ModelResponse, or raise the same error with the same message; the corpus itself is checked
  against the SDK's response types, so it is what the API can send;
- retries: with retries allowed, both try as often and wait as long (one deliberate difference: a
  retry-after past a minute);
- the comparisons can fail: a wrong body key and a dropped citation are caught.
"""

from __future__ import annotations

import base64
import json
import types
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import anthropic._base_client as sdk_base_client
import httpx2
import pytest
from anthropic import types as sdk
from anthropic.types import Message, RawMessageStreamEvent
from anthropic.types.message_create_params import (
    MessageCreateParamsNonStreaming,
    MessageCreateParamsStreaming,
)
from pydantic import BaseModel, TypeAdapter, ValidationError
from support.canned_messages import ScriptedPool, error_body, events_of, json_answer, message, sse
from support.fresh_python import run_fresh
from support.network import refusing_base_url
from support.offline_requests import all_tools
from support.recording_api import RecordingApi, Reply, Seen
from support.sdk_model import SdkModel

from stepwise.history.models import StoredMessage
from stepwise.model import blocks, messages_api
from stepwise.model.errors import ModelRateLimitedError
from stepwise.model.messages_api import MessagesApiModel
from stepwise.model.types import ChatModel, ModelRequest, ModelResponse
from stepwise.model.web import WebAccess
from stepwise.prompt.layout import build_prompt
from stepwise_local import fake_web

ROOT = Path(__file__).resolve().parents[2]
KEY = "sk-ant-contract-0123456789"
API_HEADERS = ("authorization", "anthropic-version", "anthropic-beta", "content-type", "accept")
Event = tuple[str, dict[str, Any]]


# --- the requests --------------------------------------------------------------------------------------

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + bytes(range(64))).decode()
PDF = base64.b64encode(b"%PDF-1.4\n% test\n").decode()
USER_HI = {"role": "user", "content": [{"type": "text", "text": "hi"}]}


def base_request(**update: Any) -> ModelRequest:
    request = ModelRequest(
        model="claude-haiku-4-5",
        max_tokens=512,
        system=[{"type": "text", "text": "You are helpful."}],
        messages=[USER_HI],
    )
    return request._replace(**update)


def cached_prompt() -> ModelRequest:
    """The prompt as a turn builds it: cache breakpoints on the system prompt, the tools and the history."""
    history = [
        StoredMessage(id=f"m{n}", chat_id=1, role=role, content=text, created_at=f"2026-11-22T09:00:{n:02d}Z")  # type: ignore[arg-type]
        for n, (role, text) in enumerate([("user", "hi"), ("assistant", "Hello!"), ("user", "add milk")])
    ]
    prompt = build_prompt([], datetime(2026, 11, 22, 9, 30, tzinfo=UTC), history, [])
    tools = all_tools()
    tools[-1] = {**tools[-1], "cache_control": {"type": "ephemeral", "ttl": "1h"}}
    return base_request(system=prompt.system, messages=prompt.messages, tools=tools)


def files_request() -> ModelRequest:
    content = [
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}},
        {
            "type": "document",
            "source": {"type": "base64", "media_type": "application/pdf", "data": PDF},
            "title": "scan.pdf",
        },
        {
            "type": "document",
            "source": {"type": "text", "media_type": "text/plain", "data": "Notes\nline two"},
            "title": "notes.txt",
            "citations": {"enabled": True},
            "cache_control": {"type": "ephemeral"},
        },
        {"type": "text", "text": "What is in these?"},
    ]
    return base_request(messages=[{"role": "user", "content": content}])


def tool_history_request() -> ModelRequest:
    """A step after tool calls and a web search: tool_use / tool_result and server blocks sent back."""
    searched = fake_web.search_blocks("weather", fake_web.local_results("weather"))
    messages = [
        USER_HI,
        {
            "role": "assistant",
            "content": [
                *searched,
                {"type": "text", "text": "Adding it.", "citations": None},
                {"type": "tool_use", "id": "toolu_01", "name": "add_task", "input": {"title": "milk"}},
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "toolu_01", "content": "added #1", "is_error": False}
            ],
        },
    ]
    tools = [*all_tools(), *WebAccess(search=True).server_tools()]
    return base_request(messages=messages, tools=tools, tool_choice={"type": "auto"})


REQUESTS: dict[str, Callable[[], ModelRequest]] = {
    "plain": base_request,
    "string content and an empty system": lambda: base_request(
        system=[], messages=[{"role": "user", "content": "hello"}]
    ),
    "tools and tool_choice": lambda: base_request(
        tools=all_tools(), tool_choice={"type": "tool", "name": "add_task", "disable_parallel_tool_use": True}
    ),
    "cache breakpoints": cached_prompt,
    "web search": lambda: base_request(
        tools=WebAccess(search=True, max_uses=3, allowed_domains=("example.com",)).server_tools()
    ),
    "web search and web fetch (beta header)": lambda: base_request(
        tools=[*all_tools(), *WebAccess(search=True, fetch=True, blocked_domains=("x.test",)).server_tools()]
    ),
    "images and documents": files_request,
    "tool results and server blocks sent back": tool_history_request,
    "text that is not ASCII": lambda: base_request(
        messages=[
            {"role": "user", "content": [{"type": "text", "text": 'crème ☕ 日本 \u2028 \x7f "q" \\ 🙂'}]}
        ]
    ),
}
SINK: dict[bool, Callable[[str], None] | None] = {False: None, True: lambda _text: None}


def api_headers(seen: Seen) -> dict[str, str | None]:
    return {name: seen.headers.get(name) for name in API_HEADERS}


def materialized(value: Any) -> Any:
    """A validated TypedDict with its lazily validated iterables read out (validating their items), and the
    SDK's response models among its block types (an assistant message may carry them) as the JSON given."""
    if isinstance(value, BaseModel):
        return materialized(value.model_dump(mode="json", by_alias=True, exclude_unset=True))
    if isinstance(value, dict):
        return {key: materialized(item) for key, item in value.items()}
    if isinstance(value, str | bytes | int | float | bool) or value is None:
        return value
    if isinstance(value, Iterable):
        return [materialized(item) for item in value]
    return value


# Kept for the whole run: a lazily validated iterable needs its adapter alive while it is read.
PARAMS = {
    False: TypeAdapter(MessageCreateParamsNonStreaming),
    True: TypeAdapter(MessageCreateParamsStreaming),
}


def assert_the_sdk_accepts(body: dict[str, Any]) -> None:
    """The body passes the SDK's request type, and nothing of it is dropped as unknown on the way."""
    assert materialized(PARAMS[bool(body.get("stream"))].validate_python(body)) == body


@pytest.fixture(scope="module")
def recording() -> Iterator[RecordingApi]:
    with RecordingApi() as api:
        yield api


@pytest.fixture
def api(recording: RecordingApi) -> RecordingApi:
    recording.clear()
    return recording


def sdk_and_lean(
    base_url: str, max_retries: int = 0, key: str | None = KEY
) -> tuple[SdkModel, MessagesApiModel]:
    return SdkModel(key, base_url, 5.0, max_retries), MessagesApiModel(key, base_url, 5.0, max_retries)


def json_reply(body: Any, status: int = 200, headers: dict[str, str] | None = None) -> Reply:
    return Reply(status, json.dumps(body).encode(), {"content-type": "application/json", **(headers or {})})


def stream_reply(
    events: list[Event], *, per_chunk: int = 1, drop: bool = False, ping_every: int = 0
) -> Reply:
    """The events as the API streams them, `per_chunk` events per chunk of the chunked body."""
    chunks = tuple(
        sse(events[i : i + per_chunk], ping_every=ping_every) for i in range(0, len(events), per_chunk)
    )
    return Reply(200, headers={"content-type": "text/event-stream"}, chunks=chunks, drop=drop)


HELLO = message([{"type": "text", "text": "Hello!"}])


@pytest.mark.parametrize("streamed", [False, True], ids=["json", "stream"])
@pytest.mark.parametrize("name", REQUESTS)
def test_both_clients_send_the_same_request(api: RecordingApi, name: str, streamed: bool) -> None:
    # Given a request of this kind, and an API that answers it
    request = REQUESTS[name]()
    reply = stream_reply(events_of(HELLO)) if streamed else json_reply(HELLO)
    api.script(reply, reply)
    sdk, lean = sdk_and_lean(api.base_url)
    # When the SDK and the lean client each send it
    assert sdk.complete(request, SINK[streamed]) == lean.complete(request, SINK[streamed])
    # Then the API saw the same method, path, body bytes and API headers from both
    by_sdk, by_lean = api.seen
    assert (by_lean.method, by_lean.path) == (by_sdk.method, by_sdk.path) == ("POST", "/v1/messages")
    assert json.loads(by_lean.body) == json.loads(by_sdk.body)
    assert by_lean.body == by_sdk.body
    assert api_headers(by_lean) == api_headers(by_sdk)
    assert by_lean.headers["authorization"] == f"Bearer {KEY}"
    assert (by_lean.headers.get("anthropic-beta") is not None) == ("web fetch" in name)
    # And the SDK's request types accept the body as sent
    assert_the_sdk_accepts(json.loads(by_lean.body))


def test_without_a_key_both_send_the_same_placeholder(api: RecordingApi) -> None:
    # Given no key (a compatible endpoint that needs none)
    api.script(json_reply(HELLO), json_reply(HELLO))
    sdk, lean = sdk_and_lean(api.base_url, key=None)
    # When both ask
    sdk.complete(base_request())
    lean.complete(base_request())
    # Then both sent the same placeholder credential
    by_sdk, by_lean = api.seen
    assert by_lean.headers["authorization"] == by_sdk.headers["authorization"] == "Bearer not-needed"


@pytest.mark.parametrize(
    "base_url",
    [
        None,
        "http://api.test",
        "http://api.test/",
        "http://api.test/v1",
        "http://api.test/a/b/",
        "http://api.test//",
    ],
)
def test_both_clients_join_the_base_url_alike(base_url: str | None) -> None:
    # Given both clients on in-process transports that keep the URL they were asked for
    sdk_urls: list[str] = []

    def sdk_transport(request: httpx2.Request) -> httpx2.Response:
        sdk_urls.append(str(request.url))
        return httpx2.Response(200, json=HELLO)

    sdk = SdkModel(
        KEY, base_url, 5.0, 0, http_client=httpx2.Client(transport=httpx2.MockTransport(sdk_transport))
    )
    pool = ScriptedPool([json_answer(HELLO)])
    lean = MessagesApiModel(KEY, base_url, 5.0, 0, transport=pool.transport())
    # When each asks
    sdk.complete(base_request())
    lean.complete(base_request())
    # Then both went to the same URL
    assert [request.url for request in pool.requests] == sdk_urls


# --- the responses -------------------------------------------------------------------------------------

SEARCH = fake_web.search_blocks("weather in Porto", fake_web.local_results("weather in Porto"))
FETCH = fake_web.fetch_blocks("https://example.com/page", "A page", "The page's text.")
CITATION = fake_web.search_citation("https://example.com/weather", "Weather", "Sunny all week.")
DOC_CITATION = {
    "type": "char_location",
    "cited_text": "line two",
    "document_index": 0,
    "document_title": "notes.txt",
    "start_char_index": 6,
    "end_char_index": 14,
}
SERVER_USAGE = {"web_search_requests": 1, "web_fetch_requests": 0}
FULL_USAGE = {
    "input_tokens": 1200,
    "output_tokens": 80,
    "cache_creation_input_tokens": 4100,
    "cache_read_input_tokens": 8000,
    "cache_creation": {"ephemeral_5m_input_tokens": 4100, "ephemeral_1h_input_tokens": 0},
    "server_tool_use": {"web_search_requests": 2, "web_fetch_requests": 1},
    "service_tier": "standard",
}

MESSAGES: dict[str, dict[str, Any]] = {
    "text": message([{"type": "text", "text": "Hello there, how are you today?"}]),
    "text and tool calls": message(
        [
            {"type": "text", "text": ""},
            {"type": "text", "text": "Let me add both.", "citations": None},
            {
                "type": "tool_use",
                "id": "toolu_01",
                "name": "add_task",
                "input": {"title": "milk", "due": None},
            },
            {"type": "tool_use", "id": "toolu_02", "name": "list_tasks", "input": {}},
        ],
        "tool_use",
    ),
    "citations of a document": message(
        [
            {"type": "text", "text": "The notes say "},
            {"type": "text", "text": "line two", "citations": [DOC_CITATION]},
            {"type": "text", "text": "."},
        ]
    ),
    "a web search": message(
        [
            *SEARCH,
            {
                "type": "text",
                "text": "It will be sunny.",
                "citations": [CITATION, {**CITATION, "url": "https://b.test"}],
            },
        ],
        usage={"input_tokens": 900, "output_tokens": 40, "server_tool_use": SERVER_USAGE},
    ),
    "a web search that failed": message(
        [
            {"type": "server_tool_use", "id": "srvtoolu_9", "name": "web_search", "input": {"query": "x"}},
            {
                "type": "web_search_tool_result",
                "tool_use_id": "srvtoolu_9",
                "content": {"type": "web_search_tool_result_error", "error_code": "max_uses_exceeded"},
            },
            {"type": "text", "text": "I could not search further."},
        ],
        usage={"input_tokens": 30, "output_tokens": 9, "server_tool_use": SERVER_USAGE},
    ),
    "search results with nulls the API sent": message(
        [
            SEARCH[0],
            {
                **SEARCH[1],
                "content": [{**SEARCH[1]["content"][0], "page_age": None}, *SEARCH[1]["content"][1:]],
            },
            {"type": "text", "text": "Done."},
        ],
        usage={"input_tokens": 30, "output_tokens": 9, "server_tool_use": SERVER_USAGE},
    ),
    "a web fetch and a tool call": message(
        [
            *FETCH,
            {"type": "text", "text": "The page says hello."},
            {"type": "tool_use", "id": "toolu_03", "name": "add_task", "input": {"title": "read it"}},
        ],
        "tool_use",
        usage={
            "input_tokens": 500,
            "output_tokens": 30,
            "server_tool_use": {"web_search_requests": 0, "web_fetch_requests": 1},
        },
    ),
    "a paused turn": message([*SEARCH, {"type": "text", "text": "Still looking."}], "pause_turn"),
    "a paused turn with nothing yet": message([], "pause_turn"),
    "a refusal": message([{"type": "text", "text": "I can't help with that."}], "refusal"),
    "max_tokens": message([{"type": "text", "text": "The answer is cut"}], "max_tokens"),
    "thinking then text": message(
        [
            {"type": "thinking", "thinking": "Let me think.", "signature": "sig=="},
            {"type": "redacted_thinking", "data": "opaque"},
            {"type": "text", "text": "Thought it through."},
        ]
    ),
    "usage with cache fields and server tools": message([{"type": "text", "text": "ok"}], usage=FULL_USAGE),
    "usage with explicit nulls": message(
        [{"type": "text", "text": "ok"}],
        usage={
            "input_tokens": 5,
            "output_tokens": 1,
            "cache_creation_input_tokens": None,
            "cache_read_input_tokens": None,
            "server_tool_use": None,
        },
    ),
    "no stop reason": message([{"type": "text", "text": "ok"}], None),
    "no content": message([], "end_turn"),
}
FINAL = message([{"type": "text", "text": "And that is all."}])


@dataclass(frozen=True)
class Outcome:
    """What a client made of a reply: the response and the text passed on, or the error."""

    response: ModelResponse | None
    pieces: tuple[str, ...]
    error: tuple[type[Exception], str, float | None] | None
    requests: tuple[Any, ...]  # the JSON bodies sent (a paused turn's continuation among them)


def outcome(model: ChatModel, api: RecordingApi, replies: list[Reply], streamed: bool) -> Outcome:
    """Ask `model` once with `replies` scripted (a paused turn's continuation gets FINAL)."""
    api.clear()
    api.script(*replies, json_reply(FINAL) if not streamed else stream_reply(events_of(FINAL)))
    pieces: list[str] = []
    try:
        response = model.complete(base_request(), pieces.append if streamed else None)
    except Exception as error:
        wait = getattr(error, "retry_after_seconds", None)
        return Outcome(None, tuple(pieces), (type(error), str(error), wait), sent_bodies(api))
    return Outcome(response, tuple(pieces), None, sent_bodies(api))


def sent_bodies(api: RecordingApi) -> tuple[Any, ...]:
    """The JSON bodies the API saw. JSON, not bytes: the SDK sends the server blocks of a paused turn back
    with their keys in its models' field order, the lean client in the order the API gave them."""
    return tuple(json.loads(seen.body) for seen in api.seen)


def both_outcomes(api: RecordingApi, replies: list[Reply], streamed: bool) -> tuple[Outcome, Outcome]:
    sdk, lean = sdk_and_lean(api.base_url)
    return outcome(sdk, api, replies, streamed), outcome(lean, api, replies, streamed)


@pytest.mark.parametrize("name", MESSAGES)
def test_the_corpus_is_what_the_api_sends(name: str) -> None:
    # Given a corpus message, When the SDK validates it as a Message and each of its stream's events, Then
    # both pass (the corpus is the API's output, not made up)
    Message.model_validate(MESSAGES[name])
    events = TypeAdapter(RawMessageStreamEvent)
    for _name, data in events_of(MESSAGES[name]):
        if data["type"] != "ping":
            events.validate_python(data)


@pytest.mark.parametrize("streamed", [False, True], ids=["json", "stream"])
@pytest.mark.parametrize("name", MESSAGES)
def test_both_clients_read_a_message_alike(api: RecordingApi, name: str, streamed: bool) -> None:
    # Given the API answers with this message (as JSON, or streamed as the API streams it)
    answer = MESSAGES[name]
    reply = stream_reply(events_of(answer)) if streamed else json_reply(answer)
    # When the SDK and the lean client each ask
    by_sdk, by_lean = both_outcomes(api, [reply], streamed)
    # Then they made the same of it: response, text passed on, and the requests (a paused turn's continuation)
    assert by_sdk.error is None, by_sdk.error
    assert by_lean == by_sdk


def one_char_tool_input() -> list[Event]:
    encoded = json.dumps({"title": "renew the passport — soon", "tags": ["a", "b"], "n": 1.5, "x": None})
    return [
        ("message_start", {"type": "message_start", "message": message([], None)}),
        block_start(0, {"type": "tool_use", "id": "toolu_7", "name": "add_task", "input": {}}),
        *(delta(0, {"type": "input_json_delta", "partial_json": char}) for char in encoded),
        block_stop(0),
        block_start(1, {"type": "server_tool_use", "id": "srvtoolu_7", "name": "web_search", "input": {}}),
        delta(1, {"type": "input_json_delta", "partial_json": '{"query": '}),
        delta(1, {"type": "input_json_delta", "partial_json": '"porto"}'}),
        block_stop(1),
        block_start(2, {"type": "tool_use", "id": "toolu_8", "name": "list_tasks", "input": {}}),
        block_stop(2),
        message_delta("tool_use", {"output_tokens": 40}),
        ("message_stop", {"type": "message_stop"}),
    ]


def citations_and_thinking() -> list[Event]:
    start = message([], None, usage={"input_tokens": 70, "output_tokens": 1, "cache_read_input_tokens": 4096})
    return [
        ("message_start", {"type": "message_start", "message": start}),
        block_start(0, {"type": "thinking", "thinking": "", "signature": ""}),
        delta(0, {"type": "thinking_delta", "thinking": "Weather, then."}),
        delta(0, {"type": "signature_delta", "signature": "c2ln"}),
        block_stop(0),
        block_start(1, {"type": "text", "text": "", "citations": None}),
        delta(1, {"type": "citations_delta", "citation": CITATION}),
        delta(1, {"type": "text_delta", "text": "Sunny "}),
        delta(1, {"type": "citations_delta", "citation": {**CITATION, "url": "https://b.test"}}),
        delta(1, {"type": "text_delta", "text": "all week."}),
        block_stop(1),
        message_delta(
            "end_turn",
            {
                "output_tokens": 25,
                "input_tokens": 75,
                "cache_creation_input_tokens": 10,
                "cache_read_input_tokens": 4000,
                "server_tool_use": SERVER_USAGE,
            },
        ),
        ("message_stop", {"type": "message_stop"}),
    ]


def block_start(index: int, content_block: dict[str, Any]) -> Event:
    return "content_block_start", {
        "type": "content_block_start",
        "index": index,
        "content_block": content_block,
    }


def block_stop(index: int) -> Event:
    return "content_block_stop", {"type": "content_block_stop", "index": index}


def delta(index: int, body: dict[str, Any]) -> Event:
    return "content_block_delta", {"type": "content_block_delta", "index": index, "delta": body}


def message_delta(stop_reason: str, usage: dict[str, Any]) -> Event:
    body = {
        "type": "message_delta",
        "delta": {"stop_reason": stop_reason, "stop_sequence": None},
        "usage": usage,
    }
    return "message_delta", body


def error_event(error_type: str) -> Event:
    return "error", error_body(error_type, "scripted failure mid-stream")


TEXT_EVENTS = events_of(MESSAGES["text"])
STREAMS: dict[str, Reply] = {
    "tool input one character per event": stream_reply(one_char_tool_input()),
    "citations, thinking and usage deltas": stream_reply(citations_and_thinking()),
    "all events in one chunk": stream_reply(TEXT_EVENTS, per_chunk=len(TEXT_EVENTS)),
    "a ping after every event": stream_reply(TEXT_EVENTS, ping_every=1),
    "events split across chunks": Reply(
        200,
        headers={"content-type": "text/event-stream"},
        chunks=tuple(sse(TEXT_EVENTS)[i : i + 11] for i in range(0, len(sse(TEXT_EVENTS)), 11)),
    ),
    "an overloaded_error event mid-stream": stream_reply([*TEXT_EVENTS[:5], error_event("overloaded_error")]),
    "an api_error event mid-stream": stream_reply([*TEXT_EVENTS[:5], error_event("api_error")]),
    "an invalid_request_error event mid-stream": stream_reply(
        [*TEXT_EVENTS[:3], error_event("invalid_request_error")]
    ),
    "an error event that is not JSON": Reply(
        200,
        headers={"content-type": "text/event-stream"},
        chunks=(sse(TEXT_EVENTS[:3]), b"event: error\ndata: boom\n\n"),
    ),
    "a stream that ends before message_stop": stream_reply(TEXT_EVENTS[:-2]),
    "a stream that ends without message_stop": stream_reply(TEXT_EVENTS[:-1]),
    "an event after message_stop": stream_reply([*TEXT_EVENTS, ("ping", {"type": "ping"})]),
    "a 200 that is JSON, not a stream": json_reply(MESSAGES["text"]),
}


@pytest.mark.parametrize("name", STREAMS)
def test_both_clients_read_a_stream_alike(api: RecordingApi, name: str) -> None:
    # Given the API streams this
    # When the SDK and the lean client each ask for a stream
    by_sdk, by_lean = both_outcomes(api, [STREAMS[name]], streamed=True)
    # Then they made the same of it: the same answer and pieces of text, or the same error and message
    assert by_lean == by_sdk


def test_both_clients_take_a_dropped_stream_as_broken_off_after_the_same_text(api: RecordingApi) -> None:
    # Given a stream whose connection drops after a few events (no final chunk)
    reply = stream_reply(TEXT_EVENTS[:6], drop=True)
    # When both ask
    by_sdk, by_lean = both_outcomes(api, [reply], streamed=True)
    # Then both raise the same kind of error after the same text; the message names each one's transport
    assert by_sdk.error is not None and by_lean.error is not None
    assert by_lean.error[0] is by_sdk.error[0] and by_lean.pieces == by_sdk.pieces != ()
    assert by_sdk.error[1].startswith("model stream broke off: ")
    assert by_lean.error[1].startswith("model stream broke off: ")


ERRORS: dict[str, Reply] = {
    "400 invalid_request_error": json_reply(error_body("invalid_request_error", "messages: empty"), 400),
    "401 authentication_error": json_reply(error_body("authentication_error", "invalid x-api-key"), 401),
    "403 permission_error": json_reply(error_body("permission_error"), 403),
    "404 not_found_error": json_reply(error_body("not_found_error", "model: claude-nope"), 404),
    "413 request_too_large": json_reply(error_body("request_too_large"), 413),
    "429 with retry-after": json_reply(error_body("rate_limit_error"), 429, {"retry-after": "7"}),
    "429 with retry-after-ms": json_reply(error_body("rate_limit_error"), 429, {"retry-after-ms": "1500"}),
    "429 without retry-after": json_reply(error_body("rate_limit_error"), 429),
    "500 api_error": json_reply(error_body("api_error", "Internal server error"), 500),
    "502 from a proxy (HTML)": Reply(
        502, b"<html><body>Bad gateway</body></html>\n", {"content-type": "text/html"}
    ),
    "503 with an empty body": Reply(503, b""),
    "529 overloaded_error": json_reply(error_body("overloaded_error", "Overloaded"), 529),
    "529 with retry-after": json_reply(error_body("overloaded_error"), 529, {"retry-after": "20"}),
    "a long error message": json_reply(error_body("invalid_request_error", "x" * 500), 400),
}


@pytest.mark.parametrize("streamed", [False, True], ids=["json", "stream"])
@pytest.mark.parametrize("name", ERRORS)
def test_both_clients_raise_the_same_error_for_an_error_status(
    api: RecordingApi, name: str, streamed: bool
) -> None:
    # Given the API answers with this error
    # When the SDK and the lean client each ask
    by_sdk, by_lean = both_outcomes(api, [ERRORS[name]], streamed)
    # Then both raise the same error with the same message (and the same wait for a rate limit)
    assert by_sdk.error is not None
    assert by_lean == by_sdk


def test_a_rate_limit_with_a_wait_is_the_rate_limited_error(api: RecordingApi) -> None:
    by_sdk, by_lean = both_outcomes(api, [ERRORS["429 with retry-after-ms"]], streamed=False)
    assert by_sdk.error is not None and by_sdk.error[0] is ModelRateLimitedError and by_sdk.error[2] == 1.5
    assert by_lean == by_sdk


@pytest.mark.parametrize("streamed", [False, True], ids=["json", "stream"])
def test_both_clients_stop_continuing_a_turn_that_keeps_pausing_alike(
    api: RecordingApi, streamed: bool
) -> None:
    # Given an API that pauses the turn every time
    paused = MESSAGES["a paused turn"]
    replies = [stream_reply(events_of(paused)) if streamed else json_reply(paused) for _ in range(6)]
    # When both ask
    by_sdk, by_lean = both_outcomes(api, replies, streamed)
    # Then both gave up after the same number of continuations, with the same paused step
    assert by_sdk.response is not None and by_sdk.response.stop_reason == "pause_turn"
    assert len(by_sdk.requests) == 4 and by_lean == by_sdk


def test_a_paused_turns_server_blocks_go_back_as_the_api_gave_them(api: RecordingApi) -> None:
    # Given a paused turn whose server blocks have their keys in the API's order
    reply = json_reply(MESSAGES["a paused turn"])
    by_sdk, by_lean = both_outcomes(api, [reply], streamed=False)
    # When both send the paused content back, Then it is the same JSON
    assert by_lean.requests[1] == by_sdk.requests[1]
    # And the lean client keeps the API's key order (the SDK's models reorder keys to their field order)
    lean = MessagesApiModel(KEY, api.base_url, 5.0, 0)
    api.clear()
    api.script(reply, json_reply(FINAL))
    lean.complete(base_request())
    resent = json.loads(api.seen[1].body)["messages"][-1]["content"]
    assert [list(block) for block in resent] == [
        list(block) for block in MESSAGES["a paused turn"]["content"]
    ]


def test_the_lean_client_loads_neither_the_sdk_nor_httpx() -> None:
    # Given a fresh interpreter, When it imports the client, Then neither the SDK nor httpx is loaded
    heavy = ("anthropic", "httpx", "httpx2", "httpcore", "httpcore2")
    code = (
        "import sys, stepwise.model.messages_api\n"
        f"print(sorted(m for m in sys.modules if m.split('.')[0] in {heavy!r}))"
    )
    assert run_fresh(code).strip() == "[]"


# --- retries -------------------------------------------------------------------------------------------


@pytest.fixture
def fixed_jitter(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[float]]:
    """The SDK's waits, recorded instead of slept; both clients' jitter fixed at the same value."""
    waits: list[float] = []
    sdk_time = types.SimpleNamespace(
        sleep=waits.append, time=sdk_base_client.time.time, time_ns=sdk_base_client.time.time_ns
    )
    monkeypatch.setattr(sdk_base_client, "time", sdk_time)
    monkeypatch.setattr(sdk_base_client, "random", lambda: 0.5)
    monkeypatch.setattr(messages_api, "random", types.SimpleNamespace(random=lambda: 0.5))
    yield waits


OVERLOADED = ERRORS["529 overloaded_error"]
RETRIES: dict[str, list[Reply]] = {
    "twice overloaded, then the answer": [OVERLOADED, OVERLOADED, json_reply(HELLO)],
    "408 and 409, then the answer": [
        json_reply(error_body("api_error"), 408),
        json_reply(error_body("api_error"), 409),
        json_reply(HELLO),
    ],
    "overloaded three times (out of retries)": [OVERLOADED, OVERLOADED, OVERLOADED],
    "overloaded, told not to retry": [
        json_reply(error_body("overloaded_error"), 529, {"x-should-retry": "false"})
    ],
    "a 400, told to retry": [
        json_reply(error_body("invalid_request_error"), 400, {"x-should-retry": "true"}),
        json_reply(HELLO),
    ],
    "429 asking for 1.5 s": [ERRORS["429 with retry-after-ms"], json_reply(HELLO)],
    "429 asking for 7 s, twice": [
        ERRORS["429 with retry-after"],
        ERRORS["429 with retry-after"],
        ERRORS["429 with retry-after"],
    ],
    "a 401 is not retried": [ERRORS["401 authentication_error"]],
}


@pytest.mark.parametrize("name", RETRIES)
def test_both_clients_retry_alike(api: RecordingApi, fixed_jitter: list[float], name: str) -> None:
    # Given two retries allowed, and the API answering with this sequence
    sdk, _ = sdk_and_lean(api.base_url, max_retries=2)
    lean_waits: list[float] = []
    lean = MessagesApiModel(KEY, api.base_url, 5.0, 2, sleep=lean_waits.append)
    # When each asks
    by_sdk = outcome(sdk, api, RETRIES[name], streamed=False)
    by_lean = outcome(lean, api, RETRIES[name], streamed=False)
    # Then both sent as many requests, waited as long between them, and ended alike
    assert by_lean == by_sdk
    assert lean_waits == fixed_jitter


def test_a_retry_after_past_a_minute_is_not_waited_within_a_call(
    api: RecordingApi, fixed_jitter: list[float]
) -> None:
    # Given a 503 that asks for two minutes, then the answer
    replies = [json_reply(error_body("api_error"), 503, {"retry-after": "120"}), json_reply(HELLO)]
    sdk, _ = sdk_and_lean(api.base_url, max_retries=1)
    lean_waits: list[float] = []
    lean = MessagesApiModel(KEY, api.base_url, 5.0, 1, sleep=lean_waits.append)
    # When each asks
    assert outcome(sdk, api, replies, False) == outcome(lean, api, replies, False)
    # Then the SDK (2.10) would wait the two minutes; the lean client backs off instead (a Lambda does not
    # sleep minutes: the state machine waits for retry-after, see rate_limits), as SDKs before 2.x did
    assert fixed_jitter == [120.0] and lean_waits == [0.5 * 0.875]


def test_both_clients_retry_a_refused_connection_and_then_give_up(fixed_jitter: list[float]) -> None:
    # Given an address where nothing listens
    lean_waits: list[float] = []
    with refusing_base_url() as nowhere:
        sdk = SdkModel(KEY, nowhere, 5.0, 2)
        lean = MessagesApiModel(KEY, nowhere, 5.0, 2, sleep=lean_waits.append)
        # When each asks
        errors = []
        for model in (sdk, lean):
            with pytest.raises(Exception) as raised:
                model.complete(base_request())
            errors.append(raised.value)
    # Then both waited the same backoff twice and raised the same transient error (naming their transport)
    assert lean_waits == fixed_jitter == [0.5 * 0.875, 1.0 * 0.875]
    assert type(errors[0]) is type(errors[1])
    assert [str(error).split(": ")[0] for error in errors] == ["model API unreachable"] * 2


# --- the comparisons can fail --------------------------------------------------------------------------


def test_a_wrong_body_key_would_be_caught(api: RecordingApi) -> None:
    # Given what both clients sent for the same request
    api.script(json_reply(HELLO), json_reply(HELLO))
    sdk, lean = sdk_and_lean(api.base_url)
    request = REQUESTS["tools and tool_choice"]()
    sdk.complete(request)
    lean.complete(request)
    by_sdk, by_lean = (json.loads(seen.body) for seen in api.seen)
    # When the lean body had a key misspelt, or a cache breakpoint dropped
    misspelt = {("max_token" if key == "max_tokens" else key): value for key, value in by_lean.items()}
    dropped = {**by_lean, "tools": [*by_lean["tools"][:-1], {"name": "x"}]}
    # Then it no longer equals the SDK's body, and the SDK's request types refuse it
    assert by_lean == by_sdk and misspelt != by_sdk and dropped != by_sdk
    with pytest.raises((AssertionError, ValidationError)):
        assert_the_sdk_accepts(misspelt)
    with pytest.raises((AssertionError, ValidationError)):
        assert_the_sdk_accepts({**by_lean, "tool_choice": {"type": "sometimes"}})


def test_a_dropped_citation_would_be_caught(api: RecordingApi, monkeypatch: pytest.MonkeyPatch) -> None:
    # Given a lean client that drops citations (a bug the contract must catch)
    keep = messages_api._plain_block

    def without_citations(block: object) -> dict[str, Any] | None:
        plain = keep(block)
        return {k: v for k, v in plain.items() if k != "citations"} if plain else None

    reply = json_reply(MESSAGES["a web search"])
    by_sdk, _ = both_outcomes(api, [reply], streamed=False)
    monkeypatch.setattr(messages_api, "_plain_block", without_citations)
    # When it reads a cited answer
    _, by_broken_lean = both_outcomes(api, [reply], streamed=False)
    # Then its outcome differs from the SDK's, so the contract test fails
    assert by_sdk.response is not None and by_broken_lean.response is not None
    assert by_broken_lean != by_sdk
    assert by_broken_lean.response.content[-1] == {"type": "text", "text": "It will be sunny."}


# Each of `stepwise.model.blocks`' TypedDicts and the anthropic SDK type it is named after.
SDK_TYPES: dict[str, Any] = {
    "CacheControl": sdk.CacheControlEphemeralParam,
    "Citation": sdk.CitationWebSearchResultLocationParam,
    "TextBlock": sdk.TextBlockParam,
    "ToolUseBlock": sdk.ToolUseBlockParam,
    "ToolResultBlock": sdk.ToolResultBlockParam,
    "ServerToolUseBlock": sdk.ServerToolUseBlockParam,
    "WebSearchResult": sdk.WebSearchResultBlockParam,
    "WebSearchToolResultError": sdk.WebSearchToolRequestErrorParam,
    "WebSearchToolResultBlock": sdk.WebSearchToolResultBlockParam,
    "Base64Source": sdk.Base64PDFSourceParam,
    "PlainTextSource": sdk.PlainTextSourceParam,
    "ImageBlock": sdk.ImageBlockParam,
    "DocumentBlock": sdk.DocumentBlockParam,
    "WebFetchResult": sdk.WebFetchBlockParam,
    "WebFetchToolResultError": sdk.WebFetchToolResultErrorBlockParam,
    "WebFetchToolResultBlock": sdk.WebFetchToolResultBlockParam,
    "MessageParam": sdk.MessageParam.__args__[0],  # UserMessageParam: a role and content
    "ToolParam": sdk.ToolParam,
    "WebSearchToolParam": sdk.WebSearchTool20250305Param,
    "WebFetchToolParam": sdk.WebFetchTool20250910Param,
    "ToolChoiceNone": sdk.ToolChoiceNoneParam,
}


@pytest.mark.parametrize("name", list(SDK_TYPES))
def test_each_block_type_has_the_sdk_types_field_names_and_needs_what_it_needs(name: str) -> None:
    # A field named here is one of the SDK type's; every field the SDK requires is required here too.
    ours, theirs = getattr(blocks, name), SDK_TYPES[name]
    assert set(ours.__annotations__) <= set(theirs.__annotations__), name
    assert set(theirs.__required_keys__) <= set(ours.__required_keys__), name
