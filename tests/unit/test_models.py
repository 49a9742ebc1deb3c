"""The model adapters: the Messages API client's requests, response shape, errors and retries (over a scripted
urllib3 pool, no sockets), and the offline model."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from support import scripted_http
from support.canned_messages import Canned, ScriptedPool, canned_model, error_body, json_answer, message

from stepwise.aws import http_transport
from stepwise.history.models import StoredMessage
from stepwise.model.errors import ModelPermanentError, ModelRateLimitedError, ModelTransientError
from stepwise.model.messages_api import API_VERSION, MessagesApiModel
from stepwise.model.types import ModelRequest
from stepwise.model.web import WEB_FETCH_BETA, WebAccess
from stepwise.offline.api import OfflineModel
from stepwise.prompt.layout import build_prompt
from stepwise.prompt.system import turn_context

KEY = "sk-ant-unit-SECRET-0123456789"
REQUEST = ModelRequest(
    model="claude-haiku-4-5",
    max_tokens=100,
    system=[{"type": "text", "text": "sys"}],
    messages=[{"role": "user", "content": [{"type": "text", "text": "hi"}]}],
)
HELLO = message(
    [{"type": "text", "text": "Hello"}],
    usage={
        "input_tokens": 10,
        "output_tokens": 3,
        "cache_read_input_tokens": 4096,
        "cache_creation_input_tokens": 0,
    },
)


def test_a_response_becomes_plain_blocks_with_usage() -> None:
    # Given an answer with an empty text block, a text block with null citations and a tool call
    answer = message(
        [
            {"type": "text", "text": ""},
            {"type": "text", "text": "Let me add that.", "citations": None},
            {"type": "tool_use", "id": "toolu_1", "name": "add_task", "input": {"title": "milk"}},
        ],
        stop_reason="tool_use",
        usage={"input_tokens": 10, "output_tokens": 3, "cache_read_input_tokens": 4096},
    )
    model, pool, _ = canned_model(json_answer(answer))
    # When the model is asked
    response = model.complete(REQUEST)
    # Then the empty text is gone, the rest is plain JSON, and the usage is read
    assert response.content == [
        {"type": "text", "text": "Let me add that."},
        {"type": "tool_use", "id": "toolu_1", "name": "add_task", "input": {"title": "milk"}},
    ]
    assert response.stop_reason == "tool_use" and response.model == "claude-haiku-4-5"
    assert response.usage.cache_read_input_tokens == 4096 and response.usage.input_tokens == 10
    sent = pool.bodies()[0]
    assert sent["model"] == "claude-haiku-4-5" and "tools" not in sent and "stream" not in sent
    assert "temperature" not in sent


def test_the_request_goes_to_v1_messages_with_the_api_headers_and_the_sdks_body_bytes() -> None:
    # Given a request with tools, a tool choice and text that is not ASCII
    request = REQUEST._replace(
        messages=[{"role": "user", "content": [{"type": "text", "text": "crème brûlée ☕"}]}],
        tools=[{"name": "add_task", "description": "Add.", "input_schema": {"type": "object"}}],
        tool_choice={"type": "auto"},
    )
    model, pool, _ = canned_model(json_answer(HELLO), api_key=KEY)
    # When it is sent
    model.complete(request)
    # Then it is one POST to the API's messages endpoint with its headers (no beta header without web fetch)
    (sent,) = pool.requests
    assert (sent.method, sent.url) == ("POST", "https://api.anthropic.com/v1/messages")
    assert sent.headers["authorization"] == f"Bearer {KEY}"
    assert sent.headers["anthropic-version"] == API_VERSION
    assert sent.headers["content-type"] == sent.headers["accept"] == "application/json"
    assert "anthropic-beta" not in sent.headers
    # And the body is compact UTF-8 JSON with the SDK's key order
    assert (
        sent.body
        == (
            '{"max_tokens":100,"messages":[{"role":"user","content":'
            '[{"type":"text","text":"crème brûlée ☕"}]}],'
            '"model":"claude-haiku-4-5","system":[{"type":"text","text":"sys"}],"tool_choice":{"type":"auto"},'
            '"tools":[{"name":"add_task","description":"Add.","input_schema":{"type":"object"}}]}'
        ).encode()
    )
    assert pool.timeouts == [(5.0, 5.0)] and pool.requests[0].options["preload_content"] is True


def test_web_fetch_sends_its_beta_header() -> None:
    # Given a request that offers web fetch
    model, pool, _ = canned_model(json_answer(HELLO))
    request = REQUEST._replace(tools=WebAccess(fetch=True).server_tools())
    # When it is sent
    model.complete(request)
    # Then the beta header goes with it
    assert pool.requests[0].headers["anthropic-beta"] == WEB_FETCH_BETA


@pytest.mark.parametrize(
    ("base_url", "url"),
    [
        (None, "https://api.anthropic.com/v1/messages"),
        ("http://127.0.0.1:8080", "http://127.0.0.1:8080/v1/messages"),
        ("http://127.0.0.1:8080/", "http://127.0.0.1:8080/v1/messages"),
        ("https://gateway.example/anthropic/", "https://gateway.example/anthropic/v1/messages"),
        # as the SDK does: a base URL is the host (and prefix) before /v1, which is never dropped
        ("http://127.0.0.1:8080/v1", "http://127.0.0.1:8080/v1/v1/messages"),
    ],
)
def test_the_base_url_is_joined_as_the_sdk_joins_it(base_url: str | None, url: str) -> None:
    # Given a model with this base URL
    model, pool, _ = canned_model(json_answer(HELLO), base_url=base_url)
    # When it is asked
    model.complete(REQUEST)
    # Then the request went to base + /v1/messages
    assert pool.requests[0].url == url


def test_without_a_key_the_placeholder_is_sent_and_the_key_appears_in_no_text() -> None:
    # Given a model without a key (a compatible endpoint) and one with a key that is refused
    keyless, keyless_pool, _ = canned_model(json_answer(HELLO), api_key=None)
    keyed, _, _ = canned_model(
        json_answer(error_body("authentication_error", "invalid x-api-key"), status=401), api_key=KEY
    )
    # When both are asked
    keyless.complete(REQUEST)
    with pytest.raises(ModelPermanentError) as refused:
        keyed.complete(REQUEST)
    # Then the keyless one sent the placeholder, and the key is in neither the error nor the model's repr
    assert keyless_pool.requests[0].headers["authorization"] == "Bearer not-needed"
    assert KEY not in str(refused.value) and KEY not in repr(keyed) and "401" in str(refused.value)


@pytest.mark.parametrize("status", [408, 409, 429, 500, 502, 503, 529])
def test_retryable_statuses_are_transient(status: int) -> None:
    # Given the API answers with a status worth retrying, and no retry-after
    model, _, waits = canned_model(json_answer(error_body("overloaded_error", "busy"), status=status))
    # When the model is asked (no retries within the call: max_retries is 0)
    with pytest.raises(ModelTransientError, match=str(status)) as raised:
        model.complete(REQUEST)
    # Then it is transient, not a rate limit with a wait, and nothing waited
    assert not isinstance(raised.value, ModelRateLimitedError) and waits == []


@pytest.mark.parametrize("status", [400, 401, 403, 404, 413])
def test_client_errors_are_permanent(status: int) -> None:
    model, _, _ = canned_model(json_answer(error_body("invalid_request_error", "nope"), status=status))
    with pytest.raises(ModelPermanentError):
        model.complete(REQUEST)


def test_an_error_names_the_status_and_the_apis_error_as_the_sdk_words_it() -> None:
    # Given a 400 with the API's error body, then a 502 from a proxy with an HTML page
    model, _, _ = canned_model(
        json_answer(error_body("invalid_request_error", "max_tokens: too large"), status=400),
        Canned(502, b"<html>Bad gateway</html>\n", {"content-type": "text/html"}),
    )
    # When each is met, Then the message carries the status and the body as the SDK's error shows it
    with pytest.raises(ModelPermanentError) as bad_request:
        model.complete(REQUEST)
    assert str(bad_request.value) == (
        "model API answered HTTP 400: Error code: 400 - {'type': 'error', 'error': "
        "{'type': 'invalid_request_error', 'message': 'max_tokens: too large'}}"
    )
    with pytest.raises(ModelTransientError) as bad_gateway:
        model.complete(REQUEST)
    assert str(bad_gateway.value) == "model API answered HTTP 502: <html>Bad gateway</html>"


@pytest.mark.parametrize(
    ("status", "headers", "wait"),
    [
        (429, {"retry-after": "7"}, 7.0),
        (429, {"retry-after-ms": "1500", "retry-after": "2"}, 1.5),
        (529, {"retry-after": "30"}, 30.0),
    ],
)
def test_a_rate_limit_with_retry_after_says_how_long_to_wait(
    status: int, headers: dict[str, str], wait: float
) -> None:
    # Given a 429 or 529 that says when to come back
    kind = "rate_limit_error" if status == 429 else "overloaded_error"
    model, _, _ = canned_model(json_answer(error_body(kind), status=status, headers=headers))
    # When the model is asked
    with pytest.raises(ModelRateLimitedError) as raised:
        model.complete(REQUEST)
    # Then the error carries the wait for the state machine
    assert raised.value.retry_after_seconds == wait and f"retry after {wait:g} s" in str(raised.value)


def test_timeouts_and_connection_failures_are_transient() -> None:
    # Given a read that times out, a connection that is refused and one that drops
    for failure in (
        scripted_http.read_timeout(),
        scripted_http.refused("api.anthropic.com"),
        scripted_http.connection_lost(),
    ):
        model, _, _ = canned_model(failure)
        # When the model is asked, Then it is a transient error naming the failure
        with pytest.raises(ModelTransientError, match=f"unreachable: {type(failure).__name__}"):
            model.complete(REQUEST)


def test_retries_within_a_call_back_off_as_the_sdk_does() -> None:
    # Given two overloaded answers, then the answer, and a model allowed two retries
    overloaded = json_answer(error_body("overloaded_error"), status=529)
    model, pool, waits = canned_model(overloaded, overloaded, json_answer(HELLO), max_retries=2)
    # When it is asked
    response = model.complete(REQUEST)
    # Then it answered after waiting 0.5 s and then 1 s, each less up to a quarter (jitter)
    assert response.content == [{"type": "text", "text": "Hello"}] and len(pool.requests) == 3
    assert 0.375 <= waits[0] <= 0.5 and 0.75 <= waits[1] <= 1.0
    assert pool.requests[0].body == pool.requests[2].body


def test_retries_honour_retry_after_up_to_a_minute_and_x_should_retry() -> None:
    # Given a 429 asking for 1.5 s, then a 503 asking for two minutes (too long to wait in a call)
    model, _, waits = canned_model(
        json_answer(error_body("rate_limit_error"), status=429, headers={"retry-after-ms": "1500"}),
        json_answer(error_body("api_error"), status=503, headers={"retry-after": "120"}),
        json_answer(HELLO),
        max_retries=2,
    )
    # When it is asked, Then the first wait is the one asked for and the second is the backoff
    model.complete(REQUEST)
    assert waits[0] == 1.5 and 0.75 <= waits[1] <= 1.0
    # Given a 529 the API says not to retry, and a 400 it says to retry
    no, no_pool, _ = canned_model(
        json_answer(error_body("overloaded_error"), status=529, headers={"x-should-retry": "false"}),
        max_retries=2,
    )
    yes, yes_pool, _ = canned_model(
        json_answer(error_body("invalid_request_error"), status=400, headers={"x-should-retry": "true"}),
        json_answer(HELLO),
        max_retries=2,
    )
    # When each is asked, Then the header decides
    with pytest.raises(ModelTransientError):
        no.complete(REQUEST)
    assert len(no_pool.requests) == 1
    assert yes.complete(REQUEST).stop_reason == "end_turn" and len(yes_pool.requests) == 2


def test_a_lost_connection_is_retried_and_a_permanent_error_is_not() -> None:
    # Given a refused connection, then the answer; and separately a 401
    model, pool, waits = canned_model(
        scripted_http.refused("api.anthropic.com"), json_answer(HELLO), max_retries=1
    )
    refused, refused_pool, refused_waits = canned_model(
        json_answer(error_body("authentication_error"), status=401), max_retries=3
    )
    # When each is asked
    assert model.complete(REQUEST).content == [{"type": "text", "text": "Hello"}]
    with pytest.raises(ModelPermanentError):
        refused.complete(REQUEST)
    # Then the connection was tried again after a backoff, and the 401 was not
    assert len(pool.requests) == 2 and len(waits) == 1
    assert len(refused_pool.requests) == 1 and refused_waits == []


def test_a_200_that_is_not_a_message_is_transient() -> None:
    # Given a proxy answering 200 with a page, and an endpoint answering 200 with other JSON
    for answer in (Canned(200, b"<html>oops</html>", {"content-type": "text/html"}), json_answer({"ok": 1})):
        model, _, _ = canned_model(answer)
        # When the model is asked, Then it is transient (a retry may reach the API)
        with pytest.raises(ModelTransientError, match="model API answered"):
            model.complete(REQUEST)


def test_the_pool_is_made_on_first_use_and_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    # Given a model without a transport of its own, and pools that answer from a script
    pool = ScriptedPool([json_answer(HELLO), json_answer(HELLO)])
    made: list[dict[str, object]] = []

    def new_pool(**options: object) -> ScriptedPool:
        made.append(options)
        return pool

    monkeypatch.setattr(http_transport.urllib3, "PoolManager", new_pool)
    # When it is made, Then no pool is made yet
    model = MessagesApiModel("key", None, 5.0, 0)
    assert made == []
    # When it answers twice, Then one pool carried both calls
    model.complete(REQUEST)
    model.complete(REQUEST)
    assert len(made) == 1 and len(pool.requests) == 2


def test_the_adapter_sends_the_prompts_cache_breakpoints_and_context_as_built() -> None:
    model, pool, _ = canned_model(json_answer(HELLO))
    prompt = build_prompt([], datetime(2026, 11, 22, 9, 30, tzinfo=UTC), [stored(1, "user", "hi")], [])
    request = REQUEST._replace(system=prompt.system, messages=prompt.messages)
    model.complete(request)
    sent = pool.requests[0].json()
    assert sent["system"] == prompt.system and sent["messages"] == prompt.messages
    assert sent["system"][0]["cache_control"] == {"type": "ephemeral"}
    assert sent["messages"][-1]["content"][0]["cache_control"] == {"type": "ephemeral"}


def test_the_offline_model_greets_tells_the_time_and_admits_what_it_cannot_do() -> None:
    model = OfflineModel(clock=lambda: datetime(2026, 11, 22, 9, 30, tzinfo=UTC))
    assert "offline" in model.answer("hello").lower()
    assert "2026-11-22T09:30:00+00:00" in model.answer("what time is it?")
    assert "didn't understand" in model.answer("write me a sonnet")
    response = model.complete(REQUEST)
    assert response.stop_reason == "end_turn" and response.content[0]["type"] == "text"


def test_the_offline_model_answers_the_newest_user_text() -> None:
    messages = [
        {"role": "user", "content": [{"type": "text", "text": "what time is it?"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "x"}]},
        {"role": "user", "content": [{"type": "image", "source": {}}, {"type": "text", "text": "hello"}]},
    ]
    response = OfflineModel().complete(REQUEST._replace(messages=messages))
    assert response.content[0]["text"].startswith("Hello!")
    nothing = OfflineModel().complete(REQUEST._replace(messages=[]))
    assert "didn't understand" in nothing.content[0]["text"]


def test_the_offline_model_answers_text_it_does_not_understand_with_its_help_not_with_memories() -> None:
    context = turn_context(
        datetime(2026, 11, 22, 9, 30, tzinfo=UTC), ["## Memories about the user\n- likes tea"]
    )
    messages = [
        {
            "role": "user",
            "content": [{"type": "text", "text": "what about it?"}, {"type": "text", "text": context}],
        }
    ]
    answer = OfflineModel().complete(REQUEST._replace(messages=messages)).content[0]["text"]
    assert answer.startswith("I'm in offline mode (no model API is configured), so I didn't understand that.")
    assert "Closest commands: *" in answer and "“help” lists them all" in answer  # a few it knows
    assert "likes tea" not in answer  # recalled memories are no answer to it


def stored(n: int, role: str, text: str) -> StoredMessage:
    return StoredMessage(
        id=f"m{n}", chat_id=1, role=role, content=text, created_at=f"2026-11-22T09:00:{n:02d}Z"
    )  # type: ignore[arg-type]
