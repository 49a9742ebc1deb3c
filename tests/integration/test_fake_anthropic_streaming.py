"""The fake Messages API streams like the real one and refuses what the real one refuses, and the Messages
API client reads its answers, streamed or not (real HTTP on 127.0.0.1)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
import requests

from stepwise.model.errors import ModelPermanentError, ModelTransientError
from stepwise.model.messages_api import MessagesApiModel
from stepwise.model.types import ModelRequest
from stepwise.model.web import WebAccess, cited_sources
from stepwise_local.anthropic_server import (
    FakeAnthropic,
    broken,
    paused,
    text,
    tool_use,
    web_fetch,
    web_search,
)

REQUEST = ModelRequest(
    model="claude-haiku-4-5",
    max_tokens=200,
    system=[{"type": "text", "text": "You are helpful."}],
    messages=[{"role": "user", "content": [{"type": "text", "text": "hello"}]}],
    tools=[{"name": "add_task", "description": "Add a task.", "input_schema": {"type": "object"}}],
)
ANSWER = "One two three four five six seven eight nine ten eleven twelve."
RESULTS = [("https://example.com/a", "A page", "Alpha."), ("https://example.org/b", "B page", "Beta.")]


@pytest.fixture
def api() -> Iterator[FakeAnthropic]:
    with FakeAnthropic() as fake:
        yield fake


def model_for(api: FakeAnthropic) -> MessagesApiModel:
    return MessagesApiModel(api.api_key, api.base_url, timeout_seconds=5, max_retries=0)


def without_tool_choice(request: ModelRequest) -> dict[str, Any]:
    """The request's fields as a body's JSON, but the tool choice."""
    return {name: value for name, value in request._asdict().items() if name != "tool_choice"}


def web_request(tools: list[dict[str, Any]]) -> ModelRequest:
    return REQUEST._replace(
        tools=tools,
        messages=[{"role": "user", "content": [{"type": "text", "text": "weather?"}]}],
    )


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
    body = {**without_tool_choice(REQUEST), "stream": True}
    answer = requests.post(
        f"{api.base_url}/v1/messages", json=body, headers={"x-api-key": api.api_key}, timeout=10
    )
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


@pytest.mark.parametrize("streamed", [False, True])
def test_server_blocks_come_back_as_received_and_a_paused_turn_goes_on(
    api: FakeAnthropic, streamed: bool
) -> None:
    # Given a search that pauses the turn, then one that finishes it citing a result
    first = paused(web_search("weather", "Searching.", RESULTS))
    last = web_search("weather again", "Sunny.", RESULTS, cite=1)
    api.script(first, last)
    # When the client is asked (streamed or not)
    response = model_for(api).complete(
        web_request(WebAccess(search=True).server_tools()), (lambda _t: None) if streamed else None
    )
    # Then the fake took the paused content back unchanged (it refuses changed server blocks)
    assert api.rejected == [] and len(api.requests) == 2
    assert api.requests[1]["messages"][-1] == {"role": "assistant", "content": first.content}
    # And the step holds both calls' blocks as received, both searches, and the sources each text cited
    assert response.content == [*first.content, *last.content] and response.stop_reason == "end_turn"
    assert response.usage.web_search_requests == 2
    assert cited_sources(response.content) == [
        ("https://example.com/a", "A page"),
        ("https://example.org/b", "B page"),
    ]


def test_the_fake_api_refuses_changed_server_blocks_web_fetch_without_its_header_and_both_lists(
    api: FakeAnthropic,
) -> None:
    # Given an answer with server blocks the client has received
    answer = web_search("weather", "Sunny.", RESULTS)
    api.script(answer)
    model = model_for(api)
    tools = WebAccess(search=True).server_tools()
    model.complete(web_request(tools))
    # When a later request sends one of them back changed, Then the fake refuses it as the API does
    changed = [dict(block) for block in answer.content]
    changed[1] = {**changed[1], "content": []}
    sent = [
        *web_request(tools).messages,
        {"role": "assistant", "content": changed},
        {"role": "user", "content": "more?"},
    ]
    with pytest.raises(ModelPermanentError, match="exactly as the API returned it"):
        model.complete(web_request(tools)._replace(messages=sent))
    # And a search tool with both domain lists is refused
    with pytest.raises(ModelPermanentError, match="both allowed_domains"):
        model.complete(
            web_request([{**tools[0], "allowed_domains": ["a.com"], "blocked_domains": ["b.com"]}])
        )
    # And web fetch goes through, because the client sends its beta header
    api.script(web_fetch("https://a.example", "A", "page"))
    fetch = WebAccess(fetch=True).server_tools()
    assert model.complete(web_request(fetch)).usage.web_fetch_requests == 1
    # And without the header the fake would have refused it
    body = {**without_tool_choice(web_request(fetch))}
    refused = requests.post(
        f"{api.base_url}/v1/messages", json=body, headers={"x-api-key": api.api_key}, timeout=10
    )
    assert refused.status_code == 400 and "anthropic-beta" in refused.json()["error"]["message"]


def test_a_key_the_api_does_not_know_is_a_permanent_error(api: FakeAnthropic) -> None:
    # Given a client with the wrong key
    model = MessagesApiModel("sk-wrong", api.base_url, timeout_seconds=5, max_retries=0)
    # When it asks, Then the 401 is permanent and the key is not in the error
    with pytest.raises(ModelPermanentError, match="HTTP 401") as refused:
        model.complete(REQUEST)
    assert "sk-wrong" not in str(refused.value)
