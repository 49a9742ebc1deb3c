"""The model adapters: Anthropic's error mapping and response shape, and the offline model."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import anthropic
import httpx2 as httpx
import pytest

from stepwise.history.models import StoredMessage
from stepwise.model.anthropic_model import AnthropicModel
from stepwise.model.errors import ModelPermanentError, ModelTransientError
from stepwise.model.types import ModelRequest
from stepwise.offline.api import OfflineModel
from stepwise.prompt.layout import build_prompt
from stepwise.prompt.system import turn_context

REQUEST = ModelRequest(
    model="claude-haiku-4-5",
    max_tokens=100,
    system=[{"type": "text", "text": "sys"}],
    messages=[{"role": "user", "content": [{"type": "text", "text": "hi"}]}],
)


def model_answering(handler: Any) -> AnthropicModel:
    """An AnthropicModel whose SDK client talks to an in-process transport (no sockets)."""
    model = AnthropicModel("key", None, timeout_seconds=5, max_retries=0)
    model._client = anthropic.Anthropic(
        api_key="key", max_retries=0, http_client=httpx.Client(transport=httpx.MockTransport(handler))
    )
    return model


def message_body(**overrides: Any) -> dict[str, Any]:
    body = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-haiku-4-5",
        "content": [{"type": "text", "text": "Hello"}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {
            "input_tokens": 10,
            "output_tokens": 3,
            "cache_read_input_tokens": 4096,
            "cache_creation_input_tokens": 0,
        },
    }
    return body | overrides


def test_a_response_becomes_plain_blocks_with_usage() -> None:
    seen: list[dict[str, Any]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(__import__("json").loads(request.content))
        return httpx.Response(
            200,
            json=message_body(
                content=[
                    {"type": "text", "text": ""},
                    {"type": "text", "text": "Let me add that.", "citations": None},
                    {"type": "tool_use", "id": "toolu_1", "name": "add_task", "input": {"title": "milk"}},
                ],
                stop_reason="tool_use",
            ),
        )

    response = model_answering(handler).complete(REQUEST)
    assert response.content == [
        {"type": "text", "text": "Let me add that."},
        {"type": "tool_use", "id": "toolu_1", "name": "add_task", "input": {"title": "milk"}},
    ]
    assert response.stop_reason == "tool_use"
    assert response.usage.cache_read_input_tokens == 4096
    assert seen[0]["model"] == "claude-haiku-4-5" and "tools" not in seen[0]
    assert "temperature" not in seen[0]


@pytest.mark.parametrize("status", [408, 409, 429, 500, 502, 503, 529])
def test_retryable_statuses_are_transient(status: int) -> None:
    model = model_answering(
        lambda r: httpx.Response(
            status, json={"type": "error", "error": {"type": "overloaded_error", "message": "busy"}}
        )
    )
    with pytest.raises(ModelTransientError, match=str(status)):
        model.complete(REQUEST)


@pytest.mark.parametrize("status", [400, 401, 403, 404, 413])
def test_client_errors_are_permanent(status: int) -> None:
    model = model_answering(
        lambda r: httpx.Response(
            status, json={"type": "error", "error": {"type": "invalid_request_error", "message": "nope"}}
        )
    )
    with pytest.raises(ModelPermanentError):
        model.complete(REQUEST)


def test_timeouts_and_connection_failures_are_transient() -> None:
    def timeout(request: httpx.Request) -> httpx.Response:
        raise httpx.ReadTimeout("slow", request=request)

    def refused(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("refused", request=request)

    for handler in (timeout, refused):
        with pytest.raises(ModelTransientError):
            model_answering(handler).complete(REQUEST)


def test_the_offline_model_greets_tells_the_time_and_admits_what_it_cannot_do() -> None:
    model = OfflineModel(clock=lambda: datetime(2026, 11, 22, 9, 30, tzinfo=UTC))
    assert "offline" in model.answer("hello").lower()
    assert "2026-11-22T09:30:00+00:00" in model.answer("what time is it?")
    assert "didn't understand" in model.answer("write me a sonnet")
    response = model.complete(REQUEST)
    assert response.stop_reason == "end_turn" and response.content[0]["type"] == "text"


def test_the_offline_model_answers_the_newest_user_text() -> None:
    messages = [
        {"role": "user", "content": "what time is it?"},
        {"role": "assistant", "content": "x"},
        {"role": "user", "content": [{"type": "image", "source": {}}, {"type": "text", "text": "hello"}]},
    ]
    response = OfflineModel().complete(REQUEST.model_copy(update={"messages": messages}))
    assert response.content[0]["text"].startswith("Hello!")
    nothing = OfflineModel().complete(REQUEST.model_copy(update={"messages": []}))
    assert "didn't understand" in nothing.content[0]["text"]


def test_the_adapter_sends_the_prompts_cache_breakpoints_and_context_as_built() -> None:
    seen: list[dict[str, Any]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(__import__("json").loads(request.content))
        return httpx.Response(200, json=message_body())

    prompt = build_prompt([], datetime(2026, 11, 22, 9, 30, tzinfo=UTC), [stored(1, "user", "hi")], [])
    request = REQUEST.model_copy(update={"system": prompt.system, "messages": prompt.messages})
    model_answering(handler).complete(request)
    assert seen[0]["system"] == prompt.system and seen[0]["messages"] == prompt.messages
    assert seen[0]["system"][0]["cache_control"] == {"type": "ephemeral"}
    assert seen[0]["messages"][-1]["content"][0]["cache_control"] == {"type": "ephemeral"}


def test_the_offline_model_reads_the_user_text_and_memories_around_the_turn_context() -> None:
    context = turn_context(
        datetime(2026, 11, 22, 9, 30, tzinfo=UTC), ["## Memories about the user\n- likes tea"]
    )
    messages = [
        {
            "role": "user",
            "content": [{"type": "text", "text": "what about it?"}, {"type": "text", "text": context}],
        }
    ]
    response = OfflineModel().complete(REQUEST.model_copy(update={"messages": messages}))
    assert "- likes tea" in response.content[0]["text"]


def stored(n: int, role: str, text: str) -> StoredMessage:
    return StoredMessage(
        id=f"m{n}", chat_id=1, role=role, content=text, created_at=f"2026-11-22T09:00:{n:02d}Z"
    )  # type: ignore[arg-type]
