"""One turn at a time per chat, through the real state machine: bursts are folded, approvals do not hold the
chat, and a turn whose execution dies frees its chat and still gets its messages answered."""

from __future__ import annotations

import json
from typing import Any

from support.stack import Stack
from support.turn_fakes import user_texts

from stepwise_local import updates
from stepwise_local.anthropic_server import hang, text, tool_use


def chat_turns(stack: Stack, chat: int) -> list[dict[str, Any]]:
    return [e for e in stack.emulation.executions() if e["name"].startswith(f"chat{chat}-")]


def burst(stack: Stack, user: int, texts: list[str]) -> list[dict[str, Any]]:
    sent = [updates.text_message(user, t) for t in texts]
    for update in sent:
        assert stack.emulation.post_update(update)["statusCode"] == 200
    return sent


def test_a_burst_of_five_is_answered_in_order_by_at_most_two_turns_and_no_message_twice(stack: Stack) -> None:
    # Given a user who sends five short messages in a row
    user = stack.new_user()
    texts = [f"part {n}" for n in range(1, 6)]
    # When they reach the webhook one right after the other, while the first turn is still running (its last
    # state waits until the burst is in: no race with this machine's speed)
    with stack.emulation.holding("FinishTurnFunction"):
        burst(stack, user, texts)
    stack.emulation.wait_idle(user)
    # Then one turn answered the first message(s) and one more answered the rest: one reply per turn
    turns = chat_turns(stack, user)
    assert 1 <= len(turns) <= 2 and all(t["status"] == "SUCCEEDED" for t in turns)
    assert len(stack.anthropic.requests) == len(turns)
    replies = stack.replies(user)
    assert len(replies) == len(turns)
    # And every message reached the model exactly once as new, in order, and the last reply saw them all
    assert user_texts(stack.anthropic.requests[-1]) == texts
    assert replies[-1] == "You said: part 5"
    stored = [(m["role"], m["content"]) for m in stack.stored(user)]
    assert [c for r, c in stored if r == "user"] == texts
    assert [r for r, _ in stored].count("assistant") == len(turns)


def test_a_message_sent_while_a_turn_runs_waits_for_it_and_is_answered_after_it(stack: Stack) -> None:
    user = stack.new_user()
    # Given a turn that has called the model and whose last state is held back (the hold is checked too)
    stack.anthropic.script(text("first answer"), text("second answer"))
    with stack.emulation.holding("FinishTurnFunction") as hold:
        first = updates.text_message(user, "first")
        stack.emulation.post_update(first)
        hold.wait_until_held()
        first_turn = stack.emulation.wait_until_taken(user, first["update_id"])
        # When another message arrives
        answer = stack.emulation.post_update(updates.text_message(user, "second"))
        # Then it is queued behind the turn, which is still running
        assert stack.emulation.describe(first_turn)["status"] == "RUNNING"
        assert stack.replies(user) == []
    assert answer["headers"]["x-stepwise-action"] == "queued"
    assert json.loads(answer["body"]) == {"method": "sendChatAction", "chat_id": user, "action": "typing"}
    # And once the turn ends, the next one answers it, after the first answer
    stack.emulation.wait_idle(user)
    assert stack.replies(user) == ["first answer", "second answer"]
    assert len(chat_turns(stack, user)) == 2
    assert user_texts(stack.anthropic.requests[1]) == ["first", "second"]
    assert stack.anthropic.requests[1]["messages"][1]["content"][0]["text"] == "first answer", "1 before 2"


def test_a_turn_waiting_for_approval_does_not_hold_the_chat(stack: Stack) -> None:
    # Given a turn parked on an Approve / Deny request
    user = stack.new_user()
    stack.anthropic.script(tool_use(("add_task", {"title": "buy milk"})), text("Added."))
    stack.say(user, "add buy milk")
    stack.anthropic.script(
        tool_use(("delete_task", {"task_id": 1})), text("What can I do for you?"), text("Deleted it.")
    )
    parked = stack.send(user, "delete the milk task")
    buttons = stack.buttons(user)
    # When the user writes something else meanwhile
    other = stack.say(user, "actually, hello")
    # Then it is answered at once by a turn of its own, while the first still waits
    assert other["status"] == "SUCCEEDED" and other["name"] != parked
    assert stack.replies(user)[-1] == "What can I do for you?"
    assert stack.emulation.describe(parked)["status"] == "RUNNING"
    # And the pending request is still answerable; the parked turn finishes with its own reply, last
    stack.press(user, buttons, "Approve")
    assert stack.emulation.wait(parked)["status"] == "SUCCEEDED"
    assert stack.tasks(user) == []
    assert stack.replies(user)[-1] == "Deleted it."
    stack.emulation.wait_idle(user)


def test_an_aborted_turn_frees_its_chat_and_its_messages_are_answered_by_the_next_turn(stack: Stack) -> None:
    # Given a turn stuck on a slow model, and a second message queued behind it
    user = stack.new_user()
    stack.emulation.config.env["ANTHROPIC_TIMEOUT_SECONDS"] = "5"
    stack.anthropic.script(hang(3.0), text("Both answered."))
    first = updates.text_message(user, "first")
    stack.emulation.post_update(first)
    stuck = stack.emulation.wait_until_taken(user, first["update_id"])
    stack.anthropic.wait_for_requests(1)  # the turn is inside CallModel, waiting for the model
    second = updates.text_message(user, "second")
    assert stack.emulation.post_update(second)["statusCode"] == 200
    # When the operator stops the stuck execution
    stack.emulation._stepfunctions.stop_execution(executionArn=stack.emulation.execution_arn(stuck))
    # Then the recovery rule frees the chat, and the next turn answers both messages, once
    stack.emulation.wait_idle(user, timeout=30)
    assert [e["detail"]["name"] for e in stack.emulation.recoveries if e["detail"]["name"] == stuck] == [
        stuck
    ]
    assert "Both answered." in stack.replies(user)
    assert stack.replies(user).count("Both answered.") == 1
    assert user_texts(stack.anthropic.requests[-1]) == ["first", "second"]
    assert [m["content"] for m in stack.stored(user) if m["role"] == "user"] == ["first", "second"]


def test_a_finish_turn_that_keeps_dying_fails_the_execution_and_the_recovery_frees_the_chat(
    stack: Stack,
) -> None:
    user = stack.new_user()
    # FinishTurn dies after its work, every time: its attempt and six retries, then FinishTurnUndelivered's
    # attempt and six retries.
    stack.emulation.crash("FinishTurnFunction", "after", times=14)
    execution = stack.say(user, "hello")
    assert execution["status"] == "FAILED"
    assert not stack.emulation._crashes.get("FinishTurnFunction"), "every attempt died"
    stack.emulation.wait_idle(user, timeout=30)
    assert stack.replies(user) == ["You said: hello"], "answered once: the recovery does not answer again"
    stack.say(user, "still there?")
    assert stack.replies(user) == ["You said: hello", "You said: still there?"]


def test_a_crash_after_load_context_took_the_messages_is_retried_without_losing_or_doubling_them(
    stack: Stack,
) -> None:
    user = stack.new_user()
    stack.emulation.crash("LoadContextFunction", "after")
    execution = stack.say(user, "hello")
    assert execution["status"] == "SUCCEEDED"
    assert stack.replies(user) == ["You said: hello"]
    assert [m["content"] for m in stack.stored(user)] == ["hello", "You said: hello"]
