"""The streaming adapter: only a stream that reached message_stop is an answer."""

from __future__ import annotations

import json
from typing import Any

import anthropic
import httpx2 as httpx
import pytest

from stepwise.model.anthropic_model import AnthropicModel
from stepwise.model.errors import ModelTransientError
from stepwise.model.types import ModelRequest
from stepwise_local.anthropic_server import stream_events

REQUEST = ModelRequest(
    model="claude-haiku-4-5",
    max_tokens=100,
    system=[{"type": "text", "text": "sys"}],
    messages=[{"role": "user", "content": [{"type": "text", "text": "hi"}]}],
)
MESSAGE: dict[str, Any] = {
    "id": "msg_1",
    "type": "message",
    "role": "assistant",
    "model": "claude-haiku-4-5",
    "content": [{"type": "text", "text": "Hello there, how are you today?"}],
    "stop_reason": "end_turn",
    "stop_sequence": None,
    "usage": {"input_tokens": 10, "output_tokens": 8, "cache_read_input_tokens": 4096},
}


def sse(events: list[tuple[str, dict[str, Any]]]) -> bytes:
    return "".join(f"event: {name}\ndata: {json.dumps(data)}\n\n" for name, data in events).encode()


def model_streaming(body: bytes) -> AnthropicModel:
    def handler(request: httpx.Request) -> httpx.Response:
        assert json.loads(request.content)["stream"] is True
        return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=body)

    model = AnthropicModel("key", None, timeout_seconds=5, max_retries=0)
    model._client = anthropic.Anthropic(
        api_key="key", max_retries=0, http_client=httpx.Client(transport=httpx.MockTransport(handler))
    )
    return model


def test_a_whole_stream_is_the_answer_with_its_usage() -> None:
    pieces: list[str] = []
    response = model_streaming(sse(stream_events(MESSAGE))).complete(REQUEST, pieces.append)
    assert "".join(pieces) == "Hello there, how are you today?" and len(pieces) > 1
    assert response.content == MESSAGE["content"] and response.stop_reason == "end_turn"
    assert (response.usage.input_tokens, response.usage.output_tokens) == (10, 8)
    assert response.usage.cache_read_input_tokens == 4096


def test_a_stream_that_ends_before_message_stop_is_a_transient_error_not_a_half_answer() -> None:
    cut = [event for event in stream_events(MESSAGE) if event[0] not in ("message_delta", "message_stop")]
    with pytest.raises(ModelTransientError, match="before message_stop"):
        model_streaming(sse(cut)).complete(REQUEST, lambda _piece: None)


def test_a_stream_running_past_the_timeout_is_a_transient_error() -> None:
    model = model_streaming(sse(stream_events(MESSAGE)))
    model._timeout = -1.0  # already past the deadline at the first event
    with pytest.raises(ModelTransientError, match="still running"):
        model.complete(REQUEST, lambda _piece: None)
