"""Groups on the in-memory stack (support.memory_stack), with the fake Bot API: answered only when addressed
(a mention, a reply to the bot, a command for it, or every message with GROUP_REPLIES=all), by allowlisted
members of served groups only; the group's own list and memories, apart from each member's; who is
speaking; buttons only for the asker; the owner's notes kept out; commands about one person pointing to the
private chat; no drafts; usage counted against the member; /new in a group that is not a forum; bad input.
The emulated stack keeps the wiring (a group's turn through the real state machine, unaddressed messages
costing one webhook invocation and no DynamoDB request), a group reminder fired by the scheduler and the
summarizer's group summary (tests/integration/test_groups.py)."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest
from support.memory_stack import NOT_ALLOWED_USER, MemoryStack
from support.turn_fakes import user_texts

from stepwise.commands.new_topic import NOT_A_FORUM
from stepwise.prompt.system import is_turn_context
from stepwise_local import updates
from stepwise_local.anthropic_server import text, tool_use

BOT = {"id": 123456, "is_bot": True, "first_name": "Stepwise (fake)", "username": "stepwise_bot"}
_groups = itertools.count(1)


def new_group() -> int:
    return -1_009_000_000_000 - next(_groups)


def post(
    stack: MemoryStack, group: int, user: int, words: str, name: str = "Ana", **extra: Any
) -> dict[str, Any]:
    """Post a group message through the webhook (running nothing); returns the update (with the webhook's
    `answer`)."""
    update = updates.group_message(user, words, chat_id=group, first_name=name, **extra)
    answer = stack.post_update(update)
    assert answer["statusCode"] == 200, answer
    return {**update, "answer": answer}


def action(update: dict[str, Any]) -> str:
    return str(update["answer"]["headers"]["x-stepwise-action"])


def say(stack: MemoryStack, group: int, user: int, words: str, name: str = "Ana", **extra: Any) -> list[str]:
    """A message that addresses the bot: run its turn; returns the group's replies so far."""
    update = updates.group_message(user, words, chat_id=group, first_name=name, **extra)
    assert stack.say_update(update)["status"] == "SUCCEEDED"
    return stack.replies(group)


def queued_anything(stack: MemoryStack) -> bool:
    """Whether any message was kept in an inbox (queued, or taken and done)."""
    return bool(stack.inbox.queued or stack.inbox.done)


def context_of(request: dict[str, Any]) -> str:
    return "\n".join(
        block["text"]
        for message in request["messages"]
        for block in message["content"]
        if isinstance(block, dict) and is_turn_context(block)
    )


def sent_by_bot(stack: MemoryStack, group: int) -> dict[str, Any]:
    """The bot's newest message in the group, as a reply's `reply_to_message` carries it."""
    last = stack.telegram.messages(group)[-1]
    chat = {"id": group, "type": "supergroup", "title": "Local group"}
    return {"message_id": last["message_id"], "date": 1, "chat": chat, "from": BOT, "text": last["text"]}


def test_unaddressed_messages_start_nothing_and_keep_nothing(stack: MemoryStack) -> None:
    ana, group = stack.new_user(), new_group()
    member = {"message_id": 7, "date": 1, "chat": {"id": group, "type": "supergroup"}, "text": "pizza?"}
    member["from"] = {"id": ana + 1, "first_name": "Rui"}
    unaddressed = [
        post(stack, group, ana, "anyone for dinner tonight?"),
        post(stack, group, ana, "@otherbot play some music"),
        post(stack, group, ana, "/tasks@otherbot"),
        post(stack, group, ana, "yes please", reply_to=member),  # a reply to a member, not to the bot
    ]
    stack.drain()
    assert [action(u) for u in unaddressed] == ["ignored"] * 4
    assert stack.turns.executions == {} and not queued_anything(stack)
    assert stack.telegram.messages(group) == []


def test_a_mention_a_reply_to_the_bot_and_a_command_for_it_are_answered(stack: MemoryStack) -> None:
    ana, group = stack.new_user(), new_group()
    stack.anthropic.script(text("Hello, Ana."), text("Milk it is."))
    assert say(stack, group, ana, "@stepwise_bot hello") == ["Hello, Ana."]
    assert user_texts(stack.anthropic.requests[-1]) == ["From Ana:", "hello"], "the mention is taken off"
    assert say(stack, group, ana, "and milk", reply_to=sent_by_bot(stack, group))[-1] == "Milk it is."
    assert say(stack, group, ana, "/tasks@stepwise_bot")[-1].startswith("The group has no tasks")
    assert say(stack, group, ana, "/tasks")[-1].startswith("The group has no tasks")
    answered = len(stack.replies(group))
    assert action(post(stack, group, ana, "/tasks@otherbot")) == "ignored"
    stack.drain()
    assert len(stack.anthropic.requests) == 2 and len(stack.replies(group)) == answered


def test_group_replies_all_answers_every_members_message() -> None:
    stack = MemoryStack(env={"GROUP_REPLIES": "all"})
    ana, group = stack.new_user(), new_group()
    stack.anthropic.script(text("Pasta?"))
    assert say(stack, group, ana, "anyone for dinner tonight?") == ["Pasta?"]


def test_a_member_off_the_allowlist_is_ignored_and_nothing_of_theirs_is_stored(stack: MemoryStack) -> None:
    ana, group = stack.new_user(), new_group()
    stranger = post(stack, group, NOT_ALLOWED_USER, "@stepwise_bot what is on the list?", name="Eve")
    stack.drain()
    assert action(stranger) == "not_allowed"
    assert not queued_anything(stack) and stack.stored(group) == []
    stack.anthropic.script(text("Hi."))
    assert say(stack, group, ana, "@stepwise_bot hi") == ["Hi."]
    assert [m["content"] for m in stack.stored(group)] == ["hi", "Hi."], "the stranger's words are nowhere"


def test_allowed_chat_ids_keeps_it_silent_in_other_groups() -> None:
    served, other = new_group(), new_group()
    stack = MemoryStack(env={"ALLOWED_CHAT_IDS": str(served)})
    ana = stack.new_user()
    update = post(stack, other, ana, "@stepwise_bot hi")
    assert (action(update), json.loads(update["answer"]["body"])["detail"]) == ("ignored", "group not served")
    stack.anthropic.script(text("Hi."))
    assert say(stack, served, ana, "@stepwise_bot hi") == ["Hi."]
    assert stack.telegram.messages(other) == []


def test_the_groups_list_is_shared_by_two_members_and_apart_from_each_members_own(stack: MemoryStack) -> None:
    ana, rui, group = stack.new_user(), stack.new_user(), new_group()
    stack.anthropic.script(tool_use(("add_task", {"title": "socks"})), text("Added socks."))
    stack.say(ana, "add socks to my list")
    stack.anthropic.script(tool_use(("add_task", {"title": "bread"})), text("Added bread."))
    say(stack, group, ana, "@stepwise_bot add bread to our list")
    assert say(stack, group, rui, "/tasks", name="Rui")[-1] == "1 task:\n#1 [ ] bread"
    stack.anthropic.script(tool_use(("list_tasks", {"status": "all"})), text("Just bread."))
    say(stack, group, rui, "@stepwise_bot what is on our list?", name="Rui")
    listed = stack.anthropic.requests[-1]["messages"][-1]["content"][0]["content"]
    assert listed == "1 task:\n#1 [ ] bread"
    stack.say(rui, "/tasks")
    assert stack.replies(rui)[-1].startswith("You have no tasks"), "the group's list is not Rui's own"
    stack.say(ana, "/tasks")
    assert stack.replies(ana)[-1] == "1 task:\n#1 [ ] socks", "nor Ana's"
    assert [t["title"] for t in stack.tasks(group)] == ["bread"]


def test_a_private_memory_never_reaches_a_groups_prompt_nor_the_groups_a_private_one(
    stack: MemoryStack,
) -> None:
    ana, group = stack.new_user(), new_group()
    stack.anthropic.script(tool_use(("remember", {"fact": "Ana's bike lock code is 4711"})), text("Saved."))
    stack.say(ana, "remember my bike lock code is 4711")
    stack.anthropic.script(tool_use(("remember", {"fact": "The family wifi password is tulip"})), text("Ok."))
    say(stack, group, ana, "@stepwise_bot remember the family wifi password is tulip")
    stack.anthropic.script(tool_use(("recall", {"query": "bike lock code wifi password"})), text("No idea."))
    say(stack, group, ana, "@stepwise_bot what is my bike lock code?")
    request = stack.anthropic.requests[-1]
    assert "4711" not in json.dumps(request), "neither recalled into the prompt nor found by the tool"
    assert "tulip" in request["messages"][-1]["content"][0]["content"], "the group's own memory is found"
    stack.anthropic.script(tool_use(("recall", {"query": "bike lock code wifi password"})), text("4711."))
    stack.say(ana, "what is the wifi password and my bike lock code?")
    private = stack.anthropic.requests[-1]
    assert "4711" in json.dumps(private) and "tulip" not in json.dumps(private)


def test_sender_names_are_in_the_prompt_and_the_history(stack: MemoryStack) -> None:
    ana, rui, group = stack.new_user(), stack.new_user(), new_group()
    stack.anthropic.script(text("Noted."), text("Rui asked for bread."))
    say(stack, group, rui, "@stepwise_bot I need bread", name="Rui")
    say(stack, group, ana, "@stepwise_bot what did my brother ask for?", name="Ana")
    request = stack.anthropic.requests[-1]
    assert user_texts(request) == ["From Rui:", "I need bread", "From Ana:", "what did my brother ask for?"]
    assert "## A group chat" in context_of(request)
    stored = stack.stored(group)
    assert [(m.get("sender"), m["content"]) for m in stored if m["role"] == "user"] == [
        ("Rui", "I need bread"),
        ("Ana", "what did my brother ask for?"),
    ]
    stack.say(ana, "hello")
    assert "## A group chat" not in context_of(stack.anthropic.requests[-1]), "private chats are as before"
    assert user_texts(stack.anthropic.requests[-1])[-1] == "hello"


def press(stack: MemoryStack, user: int, message: dict[str, Any], label: str, name: str) -> str:
    """Press a button of a group's message as `user` and run what it resumed; returns what Telegram shows
    them."""
    rows = message["reply_markup"]["inline_keyboard"]
    (button,) = [b for row in rows for b in row if b["text"].startswith(label)]
    chat = {"id": message["chat_id"], "type": "supergroup", "title": "Local group"}
    sent = {"message_id": message["message_id"], "date": 0, "text": message["text"], "chat": chat}
    update = updates.callback_query(user, button["callback_data"], sent)
    update["callback_query"]["from"]["first_name"] = name
    stack.post_update(update)
    stack.drain()
    answers = stack.telegram.calls("answerCallbackQuery")
    return str(answers[-1]["params"].get("text", ""))


def test_only_the_askers_tap_resumes_an_approval(stack: MemoryStack) -> None:
    ana, rui, group = stack.new_user(), stack.new_user(), new_group()
    stack.anthropic.script(tool_use(("add_task", {"title": "bread"})), text("Added."))
    say(stack, group, ana, "@stepwise_bot add bread")
    stack.anthropic.script(tool_use(("delete_task", {"task_id": 1})), text("Deleted."))
    asked = updates.group_message(ana, "@stepwise_bot delete the bread task", chat_id=group, first_name="Ana")
    turn = stack.say_update(asked)
    buttons = stack.buttons(group)
    told = press(stack, rui, buttons, "Approve", "Rui")
    assert told == "Only the member who asked (Ana) can answer this."
    assert press(stack, NOT_ALLOWED_USER, buttons, "Approve", "Eve") == told
    assert stack.execution(turn["name"])["status"] == "WAITING" and len(stack.tasks(group)) == 1
    assert press(stack, ana, buttons, "Approve", "Ana") == "Approved ✅"
    assert stack.execution(turn["name"])["status"] == "SUCCEEDED"
    assert stack.tasks(group) == [] and stack.replies(group)[-1] == "Deleted."


def test_a_groups_model_request_holds_none_of_the_owners_notes(tmp_path: Path) -> None:
    (tmp_path / "SOUL.md").write_text("Warm and brief.", encoding="utf-8")
    (tmp_path / "USER.md").write_text("- My name is Ada; my bank PIN hint is the cat.", encoding="utf-8")
    (tmp_path / "GROUP.md").write_text("- This is the Silva family.", encoding="utf-8")
    stack = MemoryStack(env={"PERSONA_DIR": str(tmp_path)})
    ana, group = stack.new_user(), new_group()
    stack.anthropic.script(text("Hi all."), text("Hi Ada."))
    say(stack, group, ana, "@stepwise_bot what do you know about the owner?")
    request = json.dumps(stack.anthropic.requests[-1])
    assert "bank PIN" not in request and "My name is Ada" not in request
    assert "Silva family" in request and "Warm and brief." in request
    stack.say(ana, "hello")
    private = json.dumps(stack.anthropic.requests[-1])
    assert "bank PIN" in private and "Silva family" not in private


@pytest.mark.parametrize(
    "command",
    ["/usage", "/voice on", "/connect laptop", "/jobs", "/timezone Asia/Tokyo", "/secretary mute Ada"],
)
def test_commands_about_one_person_point_to_the_private_chat(stack: MemoryStack, command: str) -> None:
    ana, group = stack.new_user(), new_group()
    name = command.split()[0]
    assert say(stack, group, ana, command) == [
        f"{name} is about you alone: ask me in our private chat (open my profile and tap Message)."
    ]
    assert stack.anthropic.requests == []


def test_a_groups_answer_comes_as_messages_never_as_drafts() -> None:
    stack = MemoryStack(env={"DRAFT_INTERVAL_SECONDS": "0.01"})
    ana, group = stack.new_user(), new_group()
    stack.anthropic.script(text("A long answer " * 40))
    say(stack, group, ana, "@stepwise_bot tell me something long")
    assert stack.telegram.drafts(group) == [] and len(stack.telegram.messages(group)) == 1


def test_bad_input_is_answered_200_and_starts_nothing(stack: MemoryStack) -> None:
    ana, group = stack.new_user(), new_group()
    bad: list[dict[str, Any]] = []
    for sender_chat in (
        {"id": -1009, "type": "channel", "title": "News"},  # a channel posting in the group
        {"id": group, "type": "supergroup", "title": "Local group"},  # an anonymous admin
    ):
        update = updates.group_message(ana, "@stepwise_bot hi", chat_id=group)
        update["message"]["sender_chat"] = sender_chat
        bad.append(update)
    from_bot = updates.group_message(ana, "@stepwise_bot hi", chat_id=group)
    from_bot["message"]["from"] = {"id": 900_001, "is_bot": True, "first_name": "Other"}
    bad.append(from_bot)
    for entities in (
        [{"type": "mention", "offset": 200, "length": 13}],  # past the text
        [{"type": "mention", "offset": 0, "length": 4000}],  # reaching past it
        [
            {"type": "bold", "offset": 0, "length": 5},
            {"type": "mention", "offset": 2, "length": 9},
        ],  # overlap
        [{"type": "never_seen_before", "offset": 0, "length": 13}],  # unknown type
        [{"type": "mention", "offset": -1, "length": 13}],  # not Telegram's at all
    ):
        update = updates.group_message(ana, "@stepwise_bot hi", chat_id=group)
        update["message"]["entities"] = entities
        bad.append(update)
    bots = {"message_id": 3, "date": 1, "chat": {"id": group, "type": "supergroup"}, "text": "x"}
    bots["from"] = {"id": 900_002, "is_bot": True, "first_name": "Other bot"}
    bad.append(updates.group_message(ana, "thanks", chat_id=group, reply_to=bots))  # a message it never sent
    answers = [stack.post_update(update) for update in bad]
    stack.drain()
    assert [a["statusCode"] for a in answers] == [200] * len(bad)
    assert [a["headers"]["x-stepwise-action"] for a in answers] == [
        *["not_allowed"] * 3,
        *["ignored"] * 4,
        "invalid",
        "ignored",
    ]
    assert stack.turns.executions == {}
    assert not queued_anything(stack) and stack.stored(group) == []


def test_usage_counts_against_the_member_who_asked(stack: MemoryStack) -> None:
    ana, group = stack.new_user(), new_group()
    stack.anthropic.script(text("Hello."))
    say(stack, group, ana, "@stepwise_bot hello")
    counted = [(user, period) for user, period in stack.usage.periods]
    assert any(user == ana and period.startswith("day#") for user, period in counted), "counted against Ana"
    assert [period for user, period in counted if user == group] == [], "never the group"


def test_new_in_a_group_that_is_not_a_forum_opens_nothing_and_says_so(stack: MemoryStack) -> None:
    ana, group = stack.new_user(), new_group()
    assert say(stack, group, ana, "/new Trip") == [NOT_A_FORUM]
    assert stack.telegram.topics(group) == {}
    assert all("message_thread_id" not in m for m in stack.telegram.messages(group))
    stack.telegram.forums.add(group)  # an admin turns Topics on
    say(stack, group, ana, "/new Trip")
    assert list(stack.telegram.topics(group).values()) == ["Trip"]
