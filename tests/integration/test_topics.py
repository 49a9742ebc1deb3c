"""Topics through the real state machine (moto), with the fake Bot API checking message_thread_id as Telegram
does: the wiring of topics (each a conversation of its own, answered where it was asked, with the webhook's
"typing…" and the drafts there), turns of two topics run side by side, a reminder fired by the scheduler in
its topic, and a chat stored before topics read by the new code. What topics do in a turn (/reset, /new,
renaming, a deleted topic, a job's report, approval buttons) is tested on the in-memory stack
(tests/behaviour/test_topics.py)."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

from support.stack import Stack

from stepwise.prompt.system import is_turn_context
from stepwise.telegram.conversation import Conversation
from stepwise_local import updates
from stepwise_local.anthropic_server import text, tool_use

SHOWN = ("sendMessage", "sendChatAction", "sendMessageDraft", "sendVoice")


def user_texts(request: dict[str, Any]) -> list[str]:
    return [
        block["text"]
        for message in request["messages"]
        for block in message["content"]
        if block.get("type") == "text" and not is_turn_context(block)
    ]


def threads_shown(stack: Stack, chat: int) -> list[tuple[str, int | None]]:
    """Every accepted call that shows something in the chat, with the topic it went to."""
    return [
        (call["method"], call["params"].get("message_thread_id"))
        for call in stack.telegram.calls()
        if call["method"] in SHOWN and call["params"].get("chat_id") == chat
    ]


def test_two_topics_are_answered_in_place_with_their_own_histories(stack: Stack) -> None:
    user = stack.new_user()
    trip, food = stack.telegram.add_topic(user, "Trip"), stack.telegram.add_topic(user, "Food")
    stack.emulation.config.env["DRAFT_INTERVAL_SECONDS"] = "0.01"  # the stack fixture clears it
    stack.anthropic.script(text("Lisbon it is."), text("Pasta then."), text("Hello."), text("Lisbon."))
    answer = stack.emulation.post_update(updates.text_message(user, "Let's go to Lisbon.", topic=trip))
    stack.emulation.wait_idle(Conversation(user, trip))
    stack.say(user, "I'd like pasta.", topic=food)
    stack.say(user, "hello")
    stack.say(user, "Where were we going?", topic=trip)
    assert json.loads(answer["body"]) == {
        "method": "sendChatAction",
        "chat_id": user,
        "action": "typing",
        "message_thread_id": trip,
    }, "the webhook's own 'typing…' shows in the topic"
    assert stack.replies(user, trip) == ["Lisbon it is.", "Lisbon."]
    assert stack.replies(user, food) == ["Pasta then."]
    assert stack.replies(user, None) == ["Hello."]
    assert user_texts(stack.anthropic.requests[-1]) == [
        "Let's go to Lisbon.",
        "Lisbon it is.",
        "Where were we going?",
    ]
    assert [m["content"] for m in stack.stored(user, food)] == ["I'd like pasta.", "Pasta then."]
    assert [m["content"] for m in stack.stored(user)] == ["hello", "Hello."]
    shown = threads_shown(stack, user)
    assert {method for method, _ in shown} >= {"sendMessage", "sendChatAction", "sendMessageDraft"}
    assert {thread for _, thread in shown} == {trip, food, None}
    drafts = [d.get("message_thread_id") for d in stack.telegram.drafts(user)]
    assert set(drafts) == {trip, food, None}, "each turn's drafts in its own topic"
    refused = [
        a for a in stack.telegram.attempts() if a["status"] != 200 and a["params"].get("chat_id") == user
    ]
    assert refused == [], "Telegram refused nothing"


def test_a_slow_turn_in_one_topic_holds_no_message_of_another(stack: Stack) -> None:
    user = stack.new_user()
    slow_topic, quick_topic = stack.telegram.add_topic(user, "Slow"), stack.telegram.add_topic(user, "Quick")
    stack.anthropic.script(text("a long answer"), text("quick answer"))

    def in_slow_topic(event: Any) -> bool:
        return isinstance(event, dict) and event.get("turn", {}).get("topic") == slow_topic

    # The slow topic's turn has its answer and its last state is held back while the other topic writes
    with stack.emulation.holding("FinishTurnFunction", in_slow_topic) as writing:
        slow = stack.send(user, "write me something long", topic=slow_topic)
        writing.wait_until_held()
        update = updates.text_message(user, "quick question", topic=quick_topic)
        answer = stack.emulation.post_update(update)
        quick = stack.emulation.wait_for_update(Conversation(user, quick_topic), update["update_id"])
        assert answer["headers"]["x-stepwise-action"] == "started", "its own webhook started its turn at once"
        assert quick["status"] == "SUCCEEDED" and stack.emulation.describe(slow)["status"] == "RUNNING"
        assert stack.replies(user) == ["quick answer"]
    assert stack.emulation.wait(slow)["status"] == "SUCCEEDED"
    assert stack.replies(user, slow_topic) == ["a long answer"]
    firsts = [user_texts(r) for r in stack.anthropic.requests[-2:]]
    assert firsts == [["write me something long"], ["quick question"]], "never folded together"


def test_a_reminder_fires_in_the_topic_where_it_was_set(clock_stack: Stack) -> None:
    stack, user = clock_stack, clock_stack.new_user()
    thread = stack.telegram.add_topic(user, "Kitchen")
    stack.anthropic.script(
        tool_use(("set_reminder", {"text": "take the pizza out", "in_minutes": 1})), text("Ok.")
    )
    stack.say(user, "remind me in a minute", topic=thread)
    stack.emulation.advance_clock(timedelta(minutes=2))
    fired = stack.emulation.fire_due_schedules(prefix=f"u{user}-")
    assert len(fired) == 1
    stack.emulation.wait_idle(Conversation(user, thread))
    assert stack.replies(user, thread) == ["Ok.", "⏰ Reminder: take the pizza out"]
    assert stack.replies(user, None) == []


def test_a_chat_stored_before_topics_is_read_as_the_chats_main_conversation(stack: Stack) -> None:
    """Items written by the code before topics (history, the chat record with its summary, a queued message):
    the next turn reads them as the chat's own, with no migration."""
    user = stack.new_user()
    stack.emulation.table("MessagesTable").put_item(
        Item={
            "chat_id": user,
            "sk": "2026-11-01T10:00:00.000Z#oldoldoldoldoldoldold",
            "id": "oldoldoldoldoldoldold",
            "role": "user",
            "content": "my cat is called Miso",
            "created_at": "2026-11-01T10:00:00.000Z",
        }
    )
    stack.emulation.table("ChatsTable").put_item(
        Item={"chat_id": user, "user_id": user, "message_count": 1, "summary": "The user has a cat."}
    )
    queued = updates.text_message(user, "queued before the upgrade")
    stack.emulation.table("InboxTable").put_item(
        Item={
            "chat_id": user,
            "sk": f"q#{queued['update_id']:020d}",
            "message": json.dumps(
                {
                    "chat_id": user,
                    "update_id": queued["update_id"],
                    "user_id": user,
                    "id": "queuedqueuedqueuedque",
                    "text": "queued before the upgrade",
                    "received_at": "2026-11-01T10:00:01.000Z",
                }
            ),
            "status": "queued",
            "requeues": 0,
        }
    )
    stack.say(user, "what is my cat called?")
    stack.emulation.wait_idle(user)
    request = stack.anthropic.requests[-1]
    assert user_texts(request)[:1] == ["my cat is called Miso"]
    assert "queued before the upgrade" in user_texts(request)
    assert "The user has a cat." in json.dumps(request["messages"]), "its rolling summary, as before"
    assert stack.replies(user, None) and all(
        "message_thread_id" not in c["params"]
        for c in stack.telegram.calls()
        if c["params"].get("chat_id") == user
    )
