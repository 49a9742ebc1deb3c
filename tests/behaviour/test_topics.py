"""Topics on the in-memory stack (support.memory_stack), with the fake Bot API checking message_thread_id as
Telegram does: each topic's own window and /reset; a deleted topic; /new, with threaded mode on and off;
renaming; a job reporting in its topic; approval buttons in the topic. The emulated stack keeps the wiring
(two topics answered in place, drafts and the webhook's "typing…" included), turns of two topics running side
by side, a reminder fired by the scheduler in its topic, and items stored before topics
(tests/integration/test_topics.py)."""

from __future__ import annotations

import json
from typing import Any

from support.memory_stack import MemoryStack

from stepwise.prompt.system import is_turn_context
from stepwise_local import updates
from stepwise_local.anthropic_server import Scripted, last_user_text, text, tool_use


def user_texts(request: dict[str, Any]) -> list[str]:
    return [
        block["text"]
        for message in request["messages"]
        for block in message["content"]
        if block.get("type") == "text" and not is_turn_context(block)
    ]


def test_reset_in_a_topic_leaves_the_other_topics_window_alone(stack: MemoryStack) -> None:
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


def test_a_deleted_topics_answer_reaches_the_main_chat_once_saying_which_topic(stack: MemoryStack) -> None:
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


def test_new_opens_a_topic_answers_in_it_and_its_first_answer_names_it_once(stack: MemoryStack) -> None:
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


def test_new_with_threaded_mode_off_says_how_and_creates_nothing(stack: MemoryStack) -> None:
    user = stack.new_user()
    stack.telegram.topics_enabled = False
    try:
        stack.say(user, "/new Plans")
    finally:
        stack.telegram.topics_enabled = True
    assert stack.telegram.topics(user) == {}
    (answer,) = stack.replies(user, None)
    assert "@BotFather → the bot → Bot Settings → Threads Settings" in answer


def test_a_topic_telegram_named_is_renamed_after_its_first_answer(stack: MemoryStack) -> None:
    user = stack.new_user()
    thread = stack.telegram.add_topic(user, "New Thread")
    noted = stack.post_update(updates.topic_created(user, thread, "New Thread", implicit=True))
    assert noted["headers"]["x-stepwise-action"] == "topic_noted"
    stack.say(user, "Weekend groceries list", topic=thread)
    assert stack.telegram.topics(user) == {thread: "Weekend groceries list"}


def test_a_job_reports_in_the_topic_that_started_it(stack: MemoryStack) -> None:
    user = stack.new_user()
    thread = stack.telegram.add_topic(user, "Research")
    parent = [tool_use(("spawn_job", {"task": "Say hi.", "title": "Hi"})), text("Started job #1.")]

    def answer(request: dict[str, Any]) -> Scripted:
        if "## Background job" in json.dumps(request["messages"]):
            return text("Hi!")
        return parent.pop(0) if parent else text(f"You said: {last_user_text(request)}")

    stack.anthropic.default = answer
    stack.say(user, "in the background say hi", topic=thread)
    assert any("is done" in reply for reply in stack.replies(user, thread))
    stack.wait_idle(user)
    replies = stack.replies(user, thread)
    assert replies[0] == "Started job #1." and replies[-1].startswith("✅ Background job #1 “Hi” is done")
    assert stack.replies(user, None) == []


def test_approval_buttons_show_in_the_topic_and_the_press_answers_there(stack: MemoryStack) -> None:
    user = stack.new_user()
    thread = stack.telegram.add_topic(user, "Chores")
    stack.anthropic.script(tool_use(("add_task", {"title": "buy milk"})), text("Added."))
    stack.say(user, "add buy milk", topic=thread)
    stack.anthropic.script(tool_use(("delete_task", {"task_id": 1})), text("Deleted it."))
    parked = stack.send(user, "delete the milk task", topic=thread)
    buttons = stack.buttons(user)
    assert buttons["message_thread_id"] == thread
    stack.press(user, buttons, "Approve")
    assert stack.execution(parked)["status"] == "SUCCEEDED"
    assert stack.replies(user, thread)[-1] == "Deleted it."
    assert stack.replies(user, None) == []
    assert stack.tasks(user) == []
