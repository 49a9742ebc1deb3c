"""The fake Messages API streams like the real one, and the SDK adapter reads its streams (real HTTP)."""

from __future__ import annotations

import json
from collections.abc import Iterator

import httpx2 as httpx
import pytest

from stepwise.model.anthropic_model import AnthropicModel
from stepwise.model.errors import ModelPermanentError, ModelTransientError
from stepwise.model.types import ModelRequest
from stepwise_local.anthropic_server import FakeAnthropic, broken, text, tool_use

REQUEST = ModelRequest(
    model="claude-haiku-4-5",
    max_tokens=200,
    system=[{"type": "text", "text": "You are helpful."}],
    messages=[{"role": "user", "content": [{"type": "text", "text": "hello"}]}],
    tools=[{"name": "add_task", "description": "Add a task.", "input_schema": {"type": "object"}}],
)
ANSWER = "One two three four five six seven eight nine ten eleven twelve."


@pytest.fixture
def api() -> Iterator[FakeAnthropic]:
    with FakeAnthropic() as fake:
        yield fake


def model_for(api: FakeAnthropic) -> AnthropicModel:
    return AnthropicModel(api.api_key, api.base_url, timeout_seconds=5, max_retries=0)


def test_text_arrives_in_several_pieces_and_the_whole_answer_matches_an_unstreamed_one(
    api: FakeAnthropic,
) -> None:
    api.script(text(ANSWER), text(ANSWER))
    pieces: list[str] = []
    streamed = model_for(api).complete(REQUEST, pieces.append)
    whole = model_for(api).complete(REQUEST)
    assert len(pieces) > 2 and "".join(pieces) == ANSWER
    assert streamed.content == whole.content == [{"type": "text", "text": ANSWER}]
    assert streamed.stop_reason == whole.stop_reason == "end_turn"
    assert streamed.usage == whole.usage and streamed.usage.output_tokens > 1
    assert api.requests[0]["stream"] is True and "stream" not in api.requests[1]


def test_tool_input_is_streamed_as_json_pieces_but_never_passed_on_as_text(api: FakeAnthropic) -> None:
    args = {"title": "renew the passport before the summer holidays", "due": "2026-12-01"}
    api.script(tool_use(("add_task", args), preface="Let me note that."))
    pieces: list[str] = []
    response = model_for(api).complete(REQUEST, pieces.append)
    assert "".join(pieces) == "Let me note that."
    assert response.stop_reason == "tool_use"
    assert response.tool_uses[0]["name"] == "add_task" and response.tool_uses[0]["input"] == args


def test_the_stream_has_every_event_type_of_the_api(api: FakeAnthropic) -> None:
    api.script(tool_use(("add_task", {"title": "milk"}), preface="Sure."))
    body = {**REQUEST.model_dump(exclude={"tool_choice"}), "stream": True}
    with httpx.Client() as client:
        answer = client.post(f"{api.base_url}/v1/messages", json=body, headers={"x-api-key": api.api_key})
    assert answer.headers["content-type"] == "text/event-stream"
    events = [line.removeprefix("event: ") for line in answer.text.splitlines() if line.startswith("event: ")]
    data = [
        json.loads(line.removeprefix("data: "))
        for line in answer.text.splitlines()
        if line.startswith("data: ")
    ]
    assert events[:2] == ["message_start", "ping"] and events[-2:] == ["message_delta", "message_stop"]
    assert {"content_block_start", "content_block_delta", "content_block_stop"} <= set(events)
    assert {d["delta"]["type"] for d in data if d["type"] == "content_block_delta"} == {
        "text_delta",
        "input_json_delta",
    }
    assert [d["type"] for d in data] == events


def test_a_dropped_stream_is_a_transient_model_error(api: FakeAnthropic) -> None:
    api.script(broken(text(ANSWER), after=5))
    pieces: list[str] = []
    with pytest.raises(ModelTransientError, match="broke off"):
        model_for(api).complete(REQUEST, pieces.append)
    assert pieces, "part of the answer had arrived"


def test_an_overloaded_error_event_is_transient_and_an_invalid_request_one_permanent(
    api: FakeAnthropic,
) -> None:
    api.script(broken(text(ANSWER), 4, "overloaded_error"), broken(text(ANSWER), 4, "invalid_request_error"))
    with pytest.raises(ModelTransientError, match="overloaded_error"):
        model_for(api).complete(REQUEST, lambda _piece: None)
    with pytest.raises(ModelPermanentError):
        model_for(api).complete(REQUEST, lambda _piece: None)


def test_a_broken_stream_requested_without_streaming_is_an_overloaded_answer(api: FakeAnthropic) -> None:
    api.script(broken(text(ANSWER)))
    with pytest.raises(ModelTransientError, match="529"):
        model_for(api).complete(REQUEST)
