"""A slash command through the real state machine: the wiring of a command's turn (the webhook, LoadContext
deciding it, FinishTurn answering and storing it like any reply) with no request to the model. What each
command answers is tested on the in-memory stack (tests/behaviour/test_commands.py)."""

from __future__ import annotations

from support.stack import Stack


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
