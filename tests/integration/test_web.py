"""Web search through the real state machine, on the fake Messages API's server tools: the wiring (the tool
offered, the sources as links in the reply, the search counted in the usage table) and a streamed search
answer drafting only its text, paced in real time. What the web tools do (off by default, the budget, server
tool blocks sent back unchanged, the cached prefix, a page that gives orders) is tested on the in-memory
stack (tests/behaviour/test_web.py)."""

from __future__ import annotations

from typing import Any

from boto3.dynamodb.conditions import Key
from support.stack import Stack

from stepwise.usage.prices import WEB_SEARCH_NANO_USD
from stepwise_local.anthropic_server import web_search

RESULTS = [
    ("https://weather.example.com/lisbon", "Lisbon weather [today]", "Sunny, 21 °C in Lisbon."),
    ("https://news.example.org/a_(b)", "Other page", "Something else."),
]


def web_tools(request: dict[str, Any]) -> list[dict[str, Any]]:
    return [tool for tool in request.get("tools") or [] if "input_schema" not in tool]


def day_counter(stack: Stack, user: int) -> dict[str, Any]:
    table = stack.emulation.table("UsageTable")
    items = table.query(KeyConditionExpression=Key("user_id").eq(user), ConsistentRead=True)["Items"]
    (day,) = [item for item in items if str(item["sk"]).startswith("day#")]
    return day


def test_a_search_answer_cites_its_sources_as_links_and_is_counted(stack: Stack) -> None:
    stack.emulation.config.env.update({"WEB_SEARCH": "true", "WEB_MAX_USES": "3"})
    user = stack.new_user()
    stack.anthropic.script(web_search("Lisbon weather", "It is sunny and 21 °C in Lisbon.", RESULTS))
    stack.say(user, "what's the weather in Lisbon today?")
    (request,) = stack.anthropic.requests
    assert web_tools(request) == [{"type": "web_search_20250305", "name": "web_search", "max_uses": 3}]
    assert request["tools"][-1]["name"] == "web_search", "server tools come after the client tools"
    (message,) = stack.telegram.messages(user)
    assert message["parse_mode"] == "HTML"
    assert '<a href="https://weather.example.com/lisbon">Lisbon weather today</a>' in message["text"]
    assert stack.replies(user) == ["It is sunny and 21 °C in Lisbon.\n\nSources:\n1. Lisbon weather today"]
    stored = [m["content"] for m in stack.stored(user) if m["role"] == "assistant"]
    assert stored == [
        "It is sunny and 21 °C in Lisbon.\n\nSources:\n1. [Lisbon weather today]"
        "(https://weather.example.com/lisbon)"
    ]
    day = day_counter(stack, user)
    assert int(day["web_searches"]) == 1 and int(day["web_search_tokens"]) == 10_000
    (usage,) = stack.anthropic.usages
    tokens = (usage["input_tokens"] + usage["cache_creation_input_tokens"] * 1.25) * 1000 + usage[
        "output_tokens"
    ] * 5000
    assert int(day["cost_nano_usd"]) == round(tokens) + WEB_SEARCH_NANO_USD


def test_a_streamed_search_answer_drafts_only_its_text(stack: Stack) -> None:
    stack.emulation.config.env.update({"WEB_SEARCH": "true", "DRAFT_INTERVAL_SECONDS": "0.05"})
    user = stack.new_user()
    said = "It is sunny and 21 °C in Lisbon today, say the forecasts; " * 4
    answer = web_search("Lisbon weather", said.strip(), RESULTS)
    answer.pace = 0.03
    stack.anthropic.script(answer)
    stack.say(user, "weather in Lisbon?")
    assert stack.anthropic.requests[0]["stream"] is True
    drafts = [stack.telegram.text_of(draft) for draft in stack.telegram.drafts(user)]
    assert len(drafts) >= 2 and all(said.startswith(draft) for draft in drafts), drafts
    assert not any("encrypted" in d or "srvtoolu" in d for d in drafts)
    assert stack.replies(user)[-1].endswith("Sources:\n1. Lisbon weather today")
