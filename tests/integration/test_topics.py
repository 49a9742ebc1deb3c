"""Topics through the real state machine (moto), with the fake Bot API checking message_thread_id as Telegram
does: each topic a conversation of its own, answered where it was asked, run side by side; /new; renaming;
a deleted topic; reminders and jobs in their topic; a chat stored before topics read by the new code."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from support.stack import Stack

from stepwise.prompt.system import is_turn_context
from stepwise.telegram.conversation import Conversation
from stepwise_local import updates
from stepwise_local.anthropic_server import Scripted, last_user_text, text, tool_use

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


def wait_for(check: Callable[[], bool], timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError("timed out")
        time.sleep(0.02)


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


def test_reset_in_a_topic_leaves_the_other_topics_window_alone(stack: Stack) -> None:
    user = stack.new_user()
    one, two = stack.telegram.add_topic(user, "One"), stack.telegram.add_topic(user, "Two")
    stack.say(user, "apples", topic=one)
    stack.say(user, "pears", topic=two)
    stack.say(user, "/reset", topic=one)
    assert stack.replies(user, one)[-1].startswith("Fresh start")
    stack.say(user, "what fruit?", topic=one)
    assert user_texts(stack.anthropic.requests[-1]) == ["what fruit?"]
    stack.say(user, "what fruit?", topic=two)
    assert user_texts(stack.anthropic.requests[-1]) == ["pears", "You said: pears", "what fruit?"]


def test_a_deleted_topics_answer_reaches_the_main_chat_once_saying_which_topic(stack: Stack) -> None:
    user = stack.new_user()
    gone = stack.telegram.add_topic(user, "Gone")
    stack.telegram.delete_topic(user, gone)
    execution = stack.say(user, "are you there?", topic=gone)
    assert execution["status"] == "SUCCEEDED"
    assert stack.replies(user) == [f"(For topic #{gone}, which was deleted:)\n\nYou said: are you there?"]
    assert [m["content"] for m in stack.stored(user, gone)] == ["are you there?", "You said: are you there?"]
    refused = [
        a
        for a in stack.telegram.attempts("sendMessage")
        if a["status"] == 400 and a["params"]["chat_id"] == user
    ]
    assert len(refused) == 1 and len(stack.telegram.messages(user)) == 1, "nothing lost, nothing twice"


def test_new_opens_a_topic_answers_in_it_and_its_first_answer_names_it_once(stack: Stack) -> None:
    user = stack.new_user()
    stack.say(user, "/new")
    ((thread, name),) = stack.telegram.topics(user).items()
    assert name == "New chat"
    (opened,) = stack.telegram.messages(user)
    assert opened["message_thread_id"] == thread and "What shall we talk about?" in stack.telegram.text_of(
        opened
    )
    stack.say(user, "Can you help me plan a trip to Lisbon in May?", topic=thread)
    stack.say(user, "And the flights?", topic=thread)
    assert stack.telegram.topics(user) == {thread: "Help me plan a trip to"}
    renames = [c for c in stack.telegram.calls("editForumTopic") if c["params"]["chat_id"] == user]
    assert len(renames) == 1, "renamed once"  # this user's: the stack is shared with the other tests
    stack.say(user, "/new Groceries")
    assert sorted(stack.telegram.topics(user).values()) == ["Groceries", "Help me plan a trip to"]


def test_new_with_threaded_mode_off_says_how_and_creates_nothing(stack: Stack) -> None:
    user = stack.new_user()
    stack.telegram.topics_enabled = False
    try:
        stack.say(user, "/new Plans")
    finally:
        stack.telegram.topics_enabled = True
    assert stack.telegram.topics(user) == {}
    (answer,) = stack.replies(user, None)
    assert "@BotFather → the bot → Bot Settings → Threads Settings" in answer


def test_a_topic_telegram_named_is_renamed_after_its_first_answer(stack: Stack) -> None:
    user = stack.new_user()
    thread = stack.telegram.add_topic(user, "New Thread")
    noted = stack.emulation.post_update(updates.topic_created(user, thread, "New Thread", implicit=True))
    assert noted["headers"]["x-stepwise-action"] == "topic_noted"
    stack.say(user, "Weekend groceries list", topic=thread)
    assert stack.telegram.topics(user) == {thread: "Weekend groceries list"}


def test_a_reminder_fires_in_the_topic_where_it_was_set(clock_stack: Stack) -> None:
    stack, user = clock_stack, clock_stack.new_user()
    thread = stack.telegram.add_topic(user, "Kitchen")
    stack.anthropic.script(
        tool_use(("set_reminder", {"text": "take the pizza out", "in_minutes": 1})), text("Ok.")
    )
    stack.say(user, "remind me in a minute", topic=thread)
    stack.emulation.advance_clock(timedelta(minutes=2))
    fired = [f for f in stack.emulation.fire_due_schedules() if f.name.startswith(f"u{user}-")]
    assert len(fired) == 1
    stack.emulation.wait_idle(Conversation(user, thread))
    assert stack.replies(user, thread) == ["Ok.", "⏰ Reminder: take the pizza out"]
    assert stack.replies(user, None) == []


def test_a_job_reports_in_the_topic_that_started_it(stack: Stack) -> None:
    user = stack.new_user()
    thread = stack.telegram.add_topic(user, "Research")
    parent = [tool_use(("spawn_job", {"task": "Say hi.", "title": "Hi"})), text("Started job #1.")]

    def answer(request: dict[str, Any]) -> Scripted:
        if "## Background job" in json.dumps(request["messages"]):
            return text("Hi!")
        return parent.pop(0) if parent else text(f"You said: {last_user_text(request)}")

    stack.anthropic.default = answer
    stack.say(user, "in the background say hi", topic=thread)
    wait_for(lambda: any("is done" in reply for reply in stack.replies(user, thread)))
    stack.emulation.wait_idle(Conversation(user, thread))
    replies = stack.replies(user, thread)
    assert replies[0] == "Started job #1." and replies[-1].startswith("✅ Background job #1 “Hi” is done")
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


def test_approval_buttons_show_in_the_topic_and_the_press_answers_there(stack: Stack) -> None:
    user = stack.new_user()
    thread = stack.telegram.add_topic(user, "Chores")
    stack.anthropic.script(tool_use(("add_task", {"title": "buy milk"})), text("Added."))
    stack.say(user, "add buy milk", topic=thread)
    stack.anthropic.script(tool_use(("delete_task", {"task_id": 1})), text("Deleted it."))
    parked = stack.send(user, "delete the milk task", topic=thread)
    buttons = stack.buttons(user)
    assert buttons["message_thread_id"] == thread
    stack.press(user, buttons, "Approve")
    assert stack.emulation.wait(parked)["status"] == "SUCCEEDED"
    assert stack.replies(user, thread)[-1] == "Deleted it."
    assert stack.replies(user, None) == []
    assert stack.tasks(user) == []
