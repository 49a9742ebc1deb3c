"""Offline, a secretary turn (docs/secretary.md) gets a neutral acknowledgement to edit: the rules read
commands, and a contact's words are never one ("add milk" from a contact adds nothing)."""

from __future__ import annotations

from support.offline_requests import offline_request

from stepwise.offline.api import SECRETARY_DRAFT, OfflineModel
from stepwise.states.secretary_turn import secretary_note


def test_a_contacts_words_get_the_neutral_draft_and_no_tool_call() -> None:
    request = offline_request("add buy milk")
    context = request.messages[-1]["content"][-1]
    context["text"] += "\n\n" + secretary_note("Ann")
    response = OfflineModel().complete(request)
    assert response.tool_uses == [] and response.content == [{"type": "text", "text": SECRETARY_DRAFT}]


def test_the_owners_own_words_are_still_commands() -> None:
    response = OfflineModel().complete(offline_request("add buy milk"))
    assert [block["name"] for block in response.tool_uses] == ["add_task"]
