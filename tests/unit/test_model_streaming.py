"""The Messages API client's streaming (over a scripted urllib3 pool, no sockets): the SSE stream is
decoded and accumulated into the whole message, text goes on as it arrives, and only a stream that reached
message_stop is an answer."""

from __future__ import annotations

import json
import time
import types
from typing import Any

import pytest
from support.canned_messages import (
    canned_model,
    error_body,
    events_of,
    json_answer,
    message,
    sse,
    stream_answer,
)

from stepwise.model import messages_api
from stepwise.model.errors import ModelPermanentError, ModelTransientError
from stepwise.model.types import ModelRequest

REQUEST = ModelRequest(
    model="claude-haiku-4-5",
    max_tokens=100,
    system=[{"type": "text", "text": "sys"}],
    messages=[{"role": "user", "content": [{"type": "text", "text": "hi"}]}],
    tools=[{"name": "add_task", "description": "Add a task.", "input_schema": {"type": "object"}}],
)
MESSAGE = message(
    [{"type": "text", "text": "Hello there, how are you today?"}],
    usage={"input_tokens": 10, "output_tokens": 8, "cache_read_input_tokens": 4096},
)
ARGS = {"title": "renew the passport — before summer", "due": "2026-12-01", "tags": ["a", "b"], "n": 1.5}


def delta(index: int, kind: str, key: str, value: Any) -> tuple[str, dict[str, Any]]:
    body = {"type": "content_block_delta", "index": index, "delta": {"type": kind, key: value}}
    return "content_block_delta", body


def block(kind: str, index: int, content_block: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
    if kind == "content_block_stop":
        return kind, {"type": kind, "index": index}
    return kind, {"type": kind, "index": index, "content_block": content_block}


def test_a_whole_stream_is_the_answer_with_its_usage() -> None:
    # Given the answer streamed a few words per event, with a ping after every other event
    model, pool, _ = canned_model(stream_answer(sse(events_of(MESSAGE), ping_every=2)))
    pieces: list[str] = []
    # When the model is asked with a text sink
    response = model.complete(REQUEST, pieces.append)
    # Then the text came in pieces and the whole answer and its usage are the message's
    assert "".join(pieces) == "Hello there, how are you today?" and len(pieces) > 1
    assert response.content == MESSAGE["content"] and response.stop_reason == "end_turn"
    assert (response.usage.input_tokens, response.usage.output_tokens) == (10, 8)
    assert response.usage.cache_read_input_tokens == 4096
    # And the request asked for a stream (last, as the SDK's body has it) and was streamed
    body = pool.requests[0].body or b""
    assert body.endswith(b',"stream":true}') and json.loads(body)["tools"] == REQUEST.tools
    assert pool.requests[0].options["preload_content"] is False


def test_tool_input_in_many_pieces_is_joined_and_parsed_and_never_passed_on_as_text() -> None:
    # Given tool input JSON sent one character per event, and a second tool call without any input delta
    encoded = json.dumps(ARGS, ensure_ascii=False)
    events = [
        ("message_start", {"type": "message_start", "message": message([], None)}),
        block("content_block_start", 0, {"type": "text", "text": ""}),
        delta(0, "text_delta", "text", "Noted."),
        block("content_block_stop", 0),
        block(
            "content_block_start", 1, {"type": "tool_use", "id": "toolu_1", "name": "add_task", "input": {}}
        ),
        *(delta(1, "input_json_delta", "partial_json", char) for char in encoded),
        block("content_block_stop", 1),
        block("content_block_start", 2, {"type": "tool_use", "id": "toolu_2", "name": "list", "input": {}}),
        delta(2, "input_json_delta", "partial_json", ""),
        block("content_block_stop", 2),
        (
            "message_delta",
            {"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 9}},
        ),
        ("message_stop", {"type": "message_stop"}),
    ]
    model, _, _ = canned_model(stream_answer(sse(events), pieces=7))
    pieces: list[str] = []
    # When the model is asked
    response = model.complete(REQUEST, pieces.append)
    # Then only the text was passed on, the input is the joined JSON, and no input is {}
    assert pieces == ["Noted."] and response.stop_reason == "tool_use"
    assert response.tool_uses == [
        {"type": "tool_use", "id": "toolu_1", "name": "add_task", "input": ARGS},
        {"type": "tool_use", "id": "toolu_2", "name": "list", "input": {}},
    ]


def test_citations_thinking_and_usage_deltas_accumulate_as_the_sdk_accumulates_them() -> None:
    # Given a thinking block, a text block whose citations arrive as deltas, and usage in message_delta
    citation = {
        "type": "web_search_result_location",
        "url": "https://a.example",
        "title": "A",
        "cited_text": "x",
    }
    start = message([], None, usage={"input_tokens": 50, "output_tokens": 1, "cache_read_input_tokens": 7})
    events = [
        ("message_start", {"type": "message_start", "message": start}),
        block("content_block_start", 0, {"type": "thinking", "thinking": "", "signature": ""}),
        delta(0, "thinking_delta", "thinking", "Let me think."),
        delta(0, "signature_delta", "signature", "sig=="),
        block("content_block_stop", 0),
        block("content_block_start", 1, {"type": "text", "text": "", "citations": []}),
        delta(1, "citations_delta", "citation", citation),
        delta(1, "citations_delta", "citation", {**citation, "url": "https://b.example"}),
        delta(1, "text_delta", "text", "Sunny."),
        delta(1, "thinking_delta", "thinking", "ignored on a text block"),
        block("content_block_stop", 1),
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                "usage": {
                    "output_tokens": 12,
                    "server_tool_use": {"web_search_requests": 2, "web_fetch_requests": 0},
                },
            },
        ),
        ("message_stop", {"type": "message_stop"}),
    ]
    model, _, _ = canned_model(stream_answer(sse(events)))
    pieces: list[str] = []
    # When the model is asked
    response = model.complete(REQUEST, pieces.append)
    # Then the thinking block is dropped, the citations are kept in order, and usage has the totals
    assert pieces == ["Sunny."]
    assert response.content == [
        {"type": "text", "text": "Sunny.", "citations": [citation, {**citation, "url": "https://b.example"}]}
    ]
    usage = response.usage
    assert (usage.input_tokens, usage.output_tokens, usage.cache_read_input_tokens) == (50, 12, 7)
    assert usage.web_search_requests == 2


def test_the_sse_decoding_takes_crlf_comments_split_lines_and_multi_line_data() -> None:
    # Given the stream with CRLF line ends, a comment line, one event's data over two lines, in 5-byte pieces
    lines: list[str] = [": keep-alive"]
    for name, data in events_of(MESSAGE):
        encoded = json.dumps(data)
        middle = encoded.find(", ") + 1  # data lines are joined with a newline: JSON whitespace
        lines += [f"event: {name}", f"data: {encoded[:middle]}", f"data:{encoded[middle:]}", ""]
    model, _, _ = canned_model(stream_answer("\r\n".join(lines).encode() + b"\r\n", pieces=5))
    pieces: list[str] = []
    # When the model is asked, Then the answer is whole
    response = model.complete(REQUEST, pieces.append)
    assert "".join(pieces) == MESSAGE["content"][0]["text"] and response.content == MESSAGE["content"]


def test_a_stream_that_ends_before_message_stop_is_a_transient_error_not_a_half_answer() -> None:
    # Given a stream that ends cleanly without message_delta and message_stop
    cut = [event for event in events_of(MESSAGE) if event[0] not in ("message_delta", "message_stop")]
    model, _, _ = canned_model(stream_answer(sse(cut)))
    # When the model is asked, Then it is no answer
    with pytest.raises(ModelTransientError, match="before message_stop"):
        model.complete(REQUEST, lambda _piece: None)


def test_a_dropped_connection_mid_stream_is_a_transient_error_after_the_text_so_far() -> None:
    # Given a stream whose connection drops after a few events
    events = events_of(MESSAGE)
    model, _, _ = canned_model(stream_answer(sse(events[:5]) + sse(events[5:6])[:9], broken=True))
    pieces: list[str] = []
    # When the model is asked, Then it broke off, after part of the text had been passed on
    with pytest.raises(ModelTransientError, match="broke off: ProtocolError"):
        model.complete(REQUEST, pieces.append)
    assert pieces


@pytest.mark.parametrize(
    ("error_type", "raised"),
    [
        ("overloaded_error", ModelTransientError),
        ("api_error", ModelTransientError),
        ("invalid_request_error", ModelPermanentError),
    ],
)
def test_an_error_event_mid_stream_is_mapped_by_its_type(error_type: str, raised: type[Exception]) -> None:
    # Given a stream that sends an `error` event after a few events
    events = [*events_of(MESSAGE)[:4], ("error", error_body(error_type, "mid-stream"))]
    model, _, _ = canned_model(stream_answer(sse(events)))
    # When the model is asked, Then the error's type decides, and its message is the SDK's
    with pytest.raises(raised) as caught:
        model.complete(REQUEST, lambda _piece: None)
    assert type(caught.value) is raised
    sent = {"type": "error", "error": {"type": error_type, "message": "mid-stream"}}
    assert str(caught.value) == f"model stream sent an error: {sent}"


def test_an_event_before_message_start_or_data_that_is_not_json_is_transient() -> None:
    # Given a stream that begins with a block, and one whose event data is not JSON
    early = sse([block("content_block_start", 0, {"type": "text", "text": ""})])
    garbled = b"event: message_start\ndata: {not json\n\n"
    for body, reason in ((early, "before message_start"), (garbled, "not JSON")):
        model, _, _ = canned_model(stream_answer(body))
        # When the model is asked, Then it is transient
        with pytest.raises(ModelTransientError, match=reason):
            model.complete(REQUEST, lambda _piece: None)


def test_an_http_error_before_the_stream_is_mapped_as_without_streaming() -> None:
    # Given a 529 answer to a streamed request
    model, _, _ = canned_model(json_answer(error_body("overloaded_error"), status=529))
    # When the model is asked, Then it is the same error as without streaming
    with pytest.raises(ModelTransientError, match="HTTP 529"):
        model.complete(REQUEST, lambda _piece: None)


def test_a_stream_running_past_the_timeout_is_a_transient_error(monkeypatch: pytest.MonkeyPatch) -> None:
    # Given a model with a 5 s timeout whose clock reads a minute later once the call has begun
    readings = iter([0.0])
    clock = types.SimpleNamespace(monotonic=lambda: next(readings, 60.0), sleep=time.sleep)
    monkeypatch.setattr(messages_api, "time", clock)
    model, _, _ = canned_model(stream_answer(sse(events_of(MESSAGE))), timeout_seconds=5.0)
    # When the model is asked, Then it gives up at the first event with a transient error
    pieces: list[str] = []
    with pytest.raises(ModelTransientError, match="still running after 5s"):
        model.complete(REQUEST, pieces.append)
    assert pieces == []
