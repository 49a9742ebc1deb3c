"""Offline, an outside server's tool is called by its name (`use notes__add_note text="buy milk"`): the rules
know no outside tool's phrasing, so `make chat` can try a connected account's tools (docs/accounts.md)."""

from __future__ import annotations

from typing import Any

import pytest
from support.offline_requests import all_tools, offline_request, with_results

from stepwise.offline.api import OfflineModel
from stepwise.remote_tools.results import framed, marker

NOTES = [
    {"name": "notes__add_note", "description": "Add a note.", "input_schema": {"type": "object"}},
    {"name": "notes__list_notes", "description": "List notes.", "input_schema": {"type": "object"}},
]


def answer(text: str, tools: list[dict[str, Any]] | None = None) -> Any:
    return OfflineModel().complete(
        offline_request(text, tools=[*all_tools(), *NOTES] if tools is None else tools)
    )


def words(response: Any) -> str:
    return " ".join(block.get("text", "") for block in response.content if block.get("type") == "text")


@pytest.mark.parametrize(
    ("text", "arguments"),
    [
        ("use notes__list_notes", {}),
        ('use notes__add_note text="buy oat milk"', {"text": "buy oat milk"}),
        ("Call notes__add_note text=milk pinned=true count=3", {"text": "milk", "pinned": True, "count": 3}),
        ('use notes__add_note {"text": "from JSON"}', {"text": "from JSON"}),
        ("use notes__add_note text='\"3\"'", {"text": "3"}),
    ],
)
def test_a_named_outside_tool_is_called_with_its_arguments(text: str, arguments: dict[str, Any]) -> None:
    response = answer(text)
    assert [(block["name"], block["input"]) for block in response.tool_uses] == [(text.split()[1], arguments)]


@pytest.mark.parametrize(
    ("text", "said"),
    [
        (
            "use notes__add_note text",
            "I couldn't read the arguments for notes__add_note: “text” is not key=value.",
        ),
        (
            'use notes__add_note text="open',
            "I couldn't read the arguments for notes__add_note: a quote is not closed.",
        ),
        (
            "use notes__add_note [1]",
            "I couldn't read the arguments for notes__add_note: “[1]” is not key=value.",
        ),
        (
            "use notes__add_note {1}",
            "I couldn't read the arguments for notes__add_note: that is not a JSON object.",
        ),
    ],
)
def test_arguments_that_cannot_be_read_are_said_and_nothing_is_called(text: str, said: str) -> None:
    response = answer(text)
    assert response.tool_uses == [] and words(response) == said


def test_a_tool_the_turn_does_not_offer_names_those_it_does() -> None:
    assert words(answer("use notes__delete_all")) == (
        "There is no outside tool “notes__delete_all” (the ones offered here: notes__add_note, "
        "notes__list_notes; /accounts connects your own)."
    )
    assert words(answer("use notes__list_notes", tools=all_tools())) == (
        "There is no outside tool “notes__list_notes” (none is offered here; /accounts connects your own)."
    )


def test_the_result_is_said_as_the_server_wrote_it() -> None:
    request = offline_request("use notes__list_notes", tools=[*all_tools(), *NOTES])
    first = OfflineModel().complete(request)
    (call,) = first.tool_uses
    follow = with_results(
        request,
        first,
        [{"type": "tool_result", "tool_use_id": call["id"], "content": "1. buy oat milk", "is_error": False}],
    )
    assert words(OfflineModel().complete(follow)) == "1. buy oat milk"


def test_the_warning_meant_for_the_model_is_left_out_of_the_words() -> None:
    request = offline_request("use notes__list_notes", tools=[*all_tools(), *NOTES])
    first = OfflineModel().complete(request)
    (call,) = first.tool_uses
    content = framed("notes", "Ann's notes:\n1. buy oat milk", 2000)
    assert content.startswith(marker("notes"))
    result = {"type": "tool_result", "tool_use_id": call["id"], "content": content, "is_error": False}
    assert words(OfflineModel().complete(with_results(request, first, [result]))) == (
        "Ann's notes:\n1. buy oat milk"
    )
