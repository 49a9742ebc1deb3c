"""/secretary on the in-memory stack (issue 42, item 8; docs/secretary.md): the state (the owner's business
connection, on or off, the muted contacts, no pending suggestions), turning it off and on, muting and
unmuting contacts in any case, bad input, and a deployment without secretary mode. Each answer is a command's:
no request to the model. The wiring through the real state machine: tests/integration/test_commands.py."""

from __future__ import annotations

import pytest
from support.memory_stack import MemoryStack

from stepwise.commands.secretary import (
    CANNOT_REPLY,
    CONNECTED,
    DISABLED,
    NO_SUGGESTIONS,
    NOT_CONNECTED,
    NOT_DEPLOYED,
    TURNED_OFF,
    TURNED_ON,
    USAGE,
)
from stepwise.secretary.connections import SecretaryConnection
from stepwise.secretary.owners import MAX_MUTED, OwnerSettings, should_draft


def answer(stack: MemoryStack, user: int, command: str) -> str:
    """Send a command; its turn succeeds without a model request; returns the user's newest message."""
    before = len(stack.anthropic.requests)
    assert stack.say(user, command)["status"] == "SUCCEEDED"
    assert len(stack.anthropic.requests) == before, "a command must not reach the model"
    return stack.replies(user)[-1]


def connect(stack: MemoryStack, owner: int, connection_id: str, date: int = 100, **state: bool) -> None:
    """Given a business connection of the owner's account kept (as the webhook keeps one)."""
    fields = {"may_reply": True, "enabled": True} | state
    stack.secretary.save(SecretaryConnection(connection_id, owner, owner, "Ada", date=date, **fields))


def test_secretary_shows_a_new_owners_state(stack: MemoryStack) -> None:
    owner = stack.new_user()
    assert answer(stack, owner, "/secretary").splitlines() == [
        "Secretary mode: on.",
        f"Your Telegram account: {NOT_CONNECTED}.",
        "Muted: nobody.",
        NO_SUGGESTIONS,
        "",
        USAGE,
    ]


@pytest.mark.parametrize(
    ("state", "shown"),
    [
        ({}, CONNECTED),
        ({"enabled": False}, DISABLED),
        ({"may_reply": False}, CANNOT_REPLY),
        ({"enabled": False, "may_reply": False}, DISABLED),
    ],
)
def test_secretary_shows_whether_the_account_is_connected_and_may_be_replied_in(
    stack: MemoryStack, state: dict[str, bool], shown: str
) -> None:
    owner, other = stack.new_user(), stack.new_user()
    connect(stack, owner, "bc-1", **state)
    assert f"Your Telegram account: {shown}." in answer(stack, owner, "/secretary")
    assert f"Your Telegram account: {NOT_CONNECTED}." in answer(stack, other, "/secretary"), "not theirs"


def test_an_active_connection_counts_before_a_newer_one_that_is_off(stack: MemoryStack) -> None:
    owner = stack.new_user()
    connect(stack, owner, "bc-old", date=100)
    connect(stack, owner, "bc-new", date=200, enabled=False)
    assert f"Your Telegram account: {CONNECTED}." in answer(stack, owner, "/secretary")
    stack.secretary.save(stack.secretary.connections["bc-old"]._replace(enabled=False, date=300))
    assert f"Your Telegram account: {DISABLED}." in answer(stack, owner, "/secretary")


def test_off_and_on_switch_secretary_mode_and_say_when_it_is_already_so(stack: MemoryStack) -> None:
    owner, other = stack.new_user(), stack.new_user()
    assert answer(stack, owner, "/secretary on") == "Secretary mode is on already."
    assert answer(stack, owner, "/secretary OFF") == TURNED_OFF
    assert answer(stack, owner, "/secretary off") == "Secretary mode is off already."
    assert answer(stack, owner, "/secretary").startswith("Secretary mode: off (messages people send you")
    settings = stack.secretary.owner_settings(owner)
    assert settings.off and not should_draft(settings, "Bo", None), "what the webhook will ask"
    assert stack.secretary.owner_settings(other) == OwnerSettings(), "another owner's stays on"
    assert answer(stack, owner, "/secretary on") == TURNED_ON
    assert answer(stack, owner, "/secretary").startswith("Secretary mode: on.")
    assert should_draft(stack.secretary.owner_settings(owner), "Bo", None)


def test_mute_and_unmute_a_contact_by_first_name_or_username_in_any_case(stack: MemoryStack) -> None:
    owner, other = stack.new_user(), stack.new_user()
    assert answer(stack, owner, "/secretary mute Ada").startswith("Muted Ada: their messages get no")
    assert answer(stack, owner, "/secretary mute ADA") == "ADA is muted already."
    assert answer(stack, owner, "/secretary MUTE  Mary   Ann").startswith("Muted Mary Ann:")
    assert answer(stack, owner, "/secretary mute @Bo_B").startswith("Muted @Bo_B:")
    assert "Muted: @Bo_B, Ada, Mary Ann." in answer(stack, owner, "/secretary")
    settings = stack.secretary.owner_settings(owner)
    assert not should_draft(settings, "ada", None) and not should_draft(settings, "Bob", "bo_b")
    assert should_draft(settings, "Cy", "cy"), "anyone else still gets suggestions"
    assert "Muted: nobody." in answer(stack, other, "/secretary"), "another owner's mutes are theirs"

    assert answer(stack, owner, "/secretary unmute aDA").startswith("Unmuted aDA: their messages get")
    assert answer(stack, owner, "/secretary unmute Ada") == "Ada is not muted."
    assert answer(stack, owner, "/secretary unmute @nobody") == "@nobody is not muted."
    assert stack.secretary.owner_settings(owner).muted == ("@Bo_B", "Mary Ann")
    assert should_draft(stack.secretary.owner_settings(owner), "Ada", None)


def test_no_more_than_the_most_contacts_are_muted(stack: MemoryStack) -> None:
    owner = stack.new_user()
    for n in range(MAX_MUTED):
        stack.secretary.mute(owner, f"Contact {n}")
    assert answer(stack, owner, "/secretary mute Ada") == (
        f"You have muted {MAX_MUTED} contacts, the most: unmute one first."
    )
    assert answer(stack, owner, "/secretary mute contact 7") == "contact 7 is muted already."
    assert len(stack.secretary.owner_settings(owner).muted) == MAX_MUTED


@pytest.mark.parametrize(
    "command",
    [
        "/secretary maybe",
        "/secretary off now",
        "/secretary on please",
        "/secretary mute",
        "/secretary unmute   ",
        "/secretary mute @bad-name",
        "/secretary mute /reset",
        "/secretary mute " + "x" * 65,
        "/secretary pending",
    ],
)
def test_bad_input_gets_the_usage_and_changes_nothing(stack: MemoryStack, command: str) -> None:
    owner = stack.new_user()
    assert answer(stack, owner, command) == USAGE
    assert stack.secretary.owner_settings(owner) == OwnerSettings()


def test_where_secretary_mode_is_not_deployed_it_says_so() -> None:
    stack = MemoryStack(env={"SECRETARY_TABLE": ""})
    owner = stack.new_user()
    for command in ("/secretary", "/secretary off", "/secretary mute Ada"):
        assert answer(stack, owner, command) == NOT_DEPLOYED
