"""A slash command through the real state machine: the wiring of a command's turn (the webhook, LoadContext
deciding it, FinishTurn answering and storing it like any reply) with no request to the model. What each
command answers is tested on the in-memory stack (tests/behaviour/test_commands.py)."""

from __future__ import annotations

from support.stack import Stack

from stepwise.commands.secretary import CONNECTED, NO_SUGGESTIONS
from stepwise_local import updates


def test_start_says_what_stepwise_can_do_and_is_stored_like_any_reply(stack: Stack) -> None:
    user = stack.new_user()
    before = len(stack.anthropic.requests)
    execution = stack.say(user, "/start")
    assert execution["status"] == "SUCCEEDED"
    assert len(stack.anthropic.requests) == before, "a command must not reach the model"
    reply = stack.replies(user)[-1]
    assert "tasks" in reply and "remind me" in reply and "/help" in reply
    stored = stack.stored(user)
    assert [m["role"] for m in stored] == ["user", "assistant"]
    assert stored[0]["content"] == "/start" and "remind me at 5pm" in stored[1]["content"]


def test_secretary_shows_the_connection_the_webhook_kept_and_keeps_the_owners_settings(stack: Stack) -> None:
    owner = stack.new_user()
    connected = stack.emulation.post_update(updates.business_connection(owner, connection_id=f"bc-{owner}"))
    assert connected["headers"]["x-stepwise-action"] == "connection_noted"
    stack.say(owner, "/secretary mute @Ada_L")
    stack.say(owner, "/secretary off")
    execution = stack.say(owner, "/secretary")
    assert execution["status"] == "SUCCEEDED"
    assert stack.replies(owner)[-1].splitlines()[:4] == [
        "Secretary mode: off (messages people send you are neither kept nor answered).",
        f"Your Telegram account: {CONNECTED}.",
        "Muted: @Ada_L.",
        NO_SUGGESTIONS,
    ]
    kept = stack.emulation.table("SecretaryTable").get_item(Key={"pk": f"owner#{owner}", "sk": "settings"})
    assert (kept["Item"]["off"], kept["Item"]["muted"]) == (True, {"@ada_l": "@Ada_L"})
