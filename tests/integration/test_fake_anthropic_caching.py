"""The fake Messages API applies the real API's prompt-caching rules (real HTTP on 127.0.0.1)."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import pytest
import requests

from stepwise_local.anthropic_server import FakeAnthropic, approx_tokens, text

EPHEMERAL = {"type": "ephemeral"}
SONNET, HAIKU = "claude-sonnet-4-5", "claude-haiku-4-5"


class ManualClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
def api(clock: ManualClock) -> Iterator[FakeAnthropic]:
    with FakeAnthropic(clock=clock) as fake:
        fake.always(text("ok"))
        yield fake


def post(api: FakeAnthropic, body: dict[str, Any]) -> requests.Response:
    return requests.post(
        f"{api.base_url}/v1/messages",
        json=body,
        headers={"x-api-key": api.api_key, "anthropic-version": "2023-06-01"},
        timeout=10,
    )


def usage(api: FakeAnthropic, body: dict[str, Any]) -> dict[str, int]:
    response = post(api, body)
    assert response.status_code == 200, response.text
    result: dict[str, int] = response.json()["usage"]
    return result


def request(model: str = SONNET, system_words: int = 1500, question: str = "hello") -> dict[str, Any]:
    """A system prompt of about `system_words` * 1.25 tokens with a breakpoint, and one user message."""
    return {
        "model": model,
        "max_tokens": 100,
        "system": [{"type": "text", "text": "word " * system_words, "cache_control": EPHEMERAL}],
        "messages": [{"role": "user", "content": [{"type": "text", "text": question}]}],
    }


def system_tokens(body: dict[str, Any]) -> int:
    return approx_tokens({k: v for k, v in body["system"][0].items() if k != "cache_control"})


def test_a_prefix_past_the_minimum_is_written_then_read_and_the_rest_is_plain_input(
    api: FakeAnthropic,
) -> None:
    body = request()
    cached = system_tokens(body)
    assert cached >= 1024
    first = usage(api, body)
    assert (first["cache_creation_input_tokens"], first["cache_read_input_tokens"]) == (cached, 0)
    second = usage(api, request(question="another question"))
    assert (second["cache_creation_input_tokens"], second["cache_read_input_tokens"]) == (0, cached)
    assert second["input_tokens"] == approx_tokens({"type": "text", "text": "another question"})


def test_the_minimum_is_4096_tokens_for_haiku_and_1024_for_sonnet(api: FakeAnthropic) -> None:
    body = request(HAIKU, system_words=2000)  # about 2,500 tokens: enough for Sonnet, not for Haiku
    assert 1024 <= system_tokens(body) < 4096
    for _ in range(2):
        haiku = usage(api, body)
        assert haiku["cache_creation_input_tokens"] == haiku["cache_read_input_tokens"] == 0
        assert haiku["input_tokens"] == system_tokens(body) + approx_tokens({"type": "text", "text": "hello"})
    assert usage(api, request(HAIKU, system_words=3500))["cache_creation_input_tokens"] >= 4096
    assert usage(api, request(SONNET, system_words=900))["cache_creation_input_tokens"] >= 1024
    assert usage(api, request(SONNET, system_words=800))["cache_creation_input_tokens"] == 0


def test_one_changed_byte_before_the_breakpoint_misses(api: FakeAnthropic) -> None:
    usage(api, request())
    changed = request()
    changed["system"][0]["text"] = changed["system"][0]["text"][:-1] + "!"
    result = usage(api, changed)
    assert result["cache_read_input_tokens"] == 0 and result["cache_creation_input_tokens"] > 0


def test_tools_come_first_in_the_prefix(api: FakeAnthropic) -> None:
    body = request()
    body["tools"] = [{"name": "t", "description": "d", "input_schema": {"type": "object"}}]
    usage(api, body)
    other = copy.deepcopy(body)
    other["tools"][0]["description"] = "changed"
    assert usage(api, other)["cache_read_input_tokens"] == 0, "a tool changed: the system behind it misses"
    assert usage(api, body)["cache_read_input_tokens"] > 0


def test_entries_live_five_minutes_from_their_last_use(api: FakeAnthropic, clock: ManualClock) -> None:
    usage(api, request())
    clock.now += 299
    assert usage(api, request())["cache_read_input_tokens"] > 0, "read within five minutes"
    clock.now += 299
    assert usage(api, request())["cache_read_input_tokens"] > 0, "the read started the lifetime again"
    clock.now += 301
    expired = usage(api, request())
    assert expired["cache_read_input_tokens"] == 0 and expired["cache_creation_input_tokens"] > 0


def test_the_longest_cached_prefix_is_read_and_what_follows_up_to_the_last_breakpoint_is_written(
    api: FakeAnthropic,
) -> None:
    body = request()
    usage(api, body)
    longer = request()
    longer["messages"] = [
        {"role": "user", "content": [{"type": "text", "text": "hello " * 200, "cache_control": EPHEMERAL}]},
        {"role": "assistant", "content": [{"type": "text", "text": "hi"}]},
        {"role": "user", "content": [{"type": "text", "text": "and now?"}]},
    ]
    result = usage(api, longer)
    first_message = approx_tokens({"type": "text", "text": "hello " * 200})
    assert result["cache_read_input_tokens"] == system_tokens(body)
    assert result["cache_creation_input_tokens"] == first_message
    assert result["input_tokens"] == approx_tokens({"type": "text", "text": "hi"}) + approx_tokens(
        {"type": "text", "text": "and now?"}
    )
    again = usage(api, longer)
    assert again["cache_read_input_tokens"] == system_tokens(body) + first_message


def test_changing_tool_choice_invalidates_cached_messages_but_not_tools_and_system(
    api: FakeAnthropic,
) -> None:
    body = request()
    body["tools"] = [{"name": "t", "description": "d", "input_schema": {"type": "object"}}]
    body["messages"][0]["content"][0]["cache_control"] = EPHEMERAL
    usage(api, body)
    none = {**body, "tool_choice": {"type": "none"}}
    result = usage(api, none)
    tools_and_system = approx_tokens(body["tools"][0]) + system_tokens(body)
    assert result["cache_read_input_tokens"] == tools_and_system


def test_models_do_not_share_entries(api: FakeAnthropic) -> None:
    usage(api, request(SONNET, system_words=3500))
    assert usage(api, request("claude-opus-4-5", system_words=3500))["cache_read_input_tokens"] == 0


def test_more_than_four_breakpoints_are_refused(api: FakeAnthropic) -> None:
    body = request()
    body["system"] = [{"type": "text", "text": f"part {n}", "cache_control": EPHEMERAL} for n in range(5)]
    response = post(api, body)
    assert response.status_code == 400
    assert "A maximum of 4 blocks with cache_control" in response.json()["error"]["message"]
    body["system"] = body["system"][:4]
    assert post(api, body).status_code == 200
    body["system"][0]["cache_control"] = {"type": "persistent"}
    assert post(api, body).status_code == 400


def test_usage_adds_up_to_the_whole_prompt(api: FakeAnthropic) -> None:
    body = request()
    whole = system_tokens(body) + approx_tokens({"type": "text", "text": "hello"})
    for _ in range(2):
        result = usage(api, body)
        parts = ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")
        assert sum(result[part] for part in parts) == whole
