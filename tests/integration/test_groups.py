"""Groups through the real state machine (moto), with the fake Bot API: answered only when addressed, by
allowlisted members only; the group's own list and memories, apart from each member's; who is speaking;
buttons only for the asker; commands about one person pointing to the private chat; no drafts; bad input."""

from __future__ import annotations

import itertools
import json
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from boto3.dynamodb.conditions import Key
from support.stack import NOT_ALLOWED_USER, Stack
from support.turn_fakes import user_texts

from stepwise.commands.new_topic import NOT_A_FORUM
from stepwise.prompt.system import is_turn_context
from stepwise_local import updates
from stepwise_local.anthropic_server import text, tool_use

BOT = {"id": 123456, "is_bot": True, "first_name": "Stepwise (fake)", "username": "stepwise_bot"}
_groups = itertools.count(1)


def new_group() -> int:
    return -1_009_000_000_000 - next(_groups)


def post(stack: Stack, group: int, user: int, words: str, name: str = "Ana", **extra: Any) -> dict[str, Any]:
    """Post a group message through the webhook; returns the update (with the webhook's `answer`)."""
    update = updates.group_message(user, words, chat_id=group, first_name=name, **extra)
    answer = stack.emulation.post_update(update)
    assert answer["statusCode"] == 200, answer
    return {**update, "answer": answer}


def action(update: dict[str, Any]) -> str:
    return str(update["answer"]["headers"]["x-stepwise-action"])


def say(stack: Stack, group: int, user: int, words: str, name: str = "Ana", **extra: Any) -> list[str]:
    """A message that addresses the bot: wait for its turn; returns the group's replies so far."""
    update = post(stack, group, user, words, name, **extra)
    assert action(update) in ("started", "queued"), update["answer"]
    assert stack.emulation.wait_for_update(group, update["update_id"])["status"] == "SUCCEEDED"
    return stack.replies(group)


def context_of(request: dict[str, Any]) -> str:
    return "\n".join(
        block["text"]
        for message in request["messages"]
        for block in message["content"]
        if isinstance(block, dict) and is_turn_context(block)
    )


def sent_by_bot(stack: Stack, group: int) -> dict[str, Any]:
    """The bot's newest message in the group, as a reply's `reply_to_message` carries it."""
    last = stack.telegram.messages(group)[-1]
    chat = {"id": group, "type": "supergroup", "title": "Local group"}
    return {"message_id": last["message_id"], "date": 1, "chat": chat, "from": BOT, "text": last["text"]}


def inbox_items(stack: Stack, group: int) -> list[dict[str, Any]]:
    table = stack.emulation.table("InboxTable")
    items: list[dict[str, Any]] = table.query(KeyConditionExpression=Key("chat_id").eq(group))["Items"]
    return items


def test_unaddressed_messages_start_nothing_cost_one_invocation_and_write_nothing(stack: Stack) -> None:
    ana, group = stack.new_user(), new_group()
    member = {"message_id": 7, "date": 1, "chat": {"id": group, "type": "supergroup"}, "text": "pizza?"}
    member["from"] = {"id": ana + 1, "first_name": "Rui"}
    invocations, requests = len(stack.emulation.invocations), len(stack.emulation.dynamodb_requests)
    executions = len(stack.emulation.executions())
    unaddressed = [
        post(stack, group, ana, "anyone for dinner tonight?"),
        post(stack, group, ana, "@otherbot play some music"),
        post(stack, group, ana, "/tasks@otherbot"),
        post(stack, group, ana, "yes please", reply_to=member),  # a reply to a member, not to the bot
    ]
    assert [action(u) for u in unaddressed] == ["ignored"] * 4
    assert [i.function for i in stack.emulation.invocations[invocations:]] == ["WebhookFunction"] * 4
    assert stack.emulation.dynamodb_requests[requests:] == [], "no DynamoDB request at all"
    assert len(stack.emulation.executions()) == executions and inbox_items(stack, group) == []
    assert stack.telegram.messages(group) == []


def test_a_mention_a_reply_to_the_bot_and_a_command_for_it_are_answered(stack: Stack) -> None:
    ana, group = stack.new_user(), new_group()
    stack.anthropic.script(text("Hello, Ana."), text("Milk it is."))
    assert say(stack, group, ana, "@stepwise_bot hello") == ["Hello, Ana."]
    assert user_texts(stack.anthropic.requests[-1]) == ["From Ana:", "hello"], "the mention is taken off"
    assert say(stack, group, ana, "and milk", reply_to=sent_by_bot(stack, group))[-1] == "Milk it is."
    assert say(stack, group, ana, "/tasks@stepwise_bot")[-1].startswith("The group has no tasks")
    assert say(stack, group, ana, "/tasks")[-1].startswith("The group has no tasks")
    answered = len(stack.replies(group))
    assert action(post(stack, group, ana, "/tasks@otherbot")) == "ignored"
    assert len(stack.anthropic.requests) == 2 and len(stack.replies(group)) == answered


def test_group_replies_all_answers_every_members_message(stack: Stack) -> None:
    ana, group = stack.new_user(), new_group()
    stack.emulation.config.env["GROUP_REPLIES"] = "all"
    stack.anthropic.script(text("Pasta?"))
    assert say(stack, group, ana, "anyone for dinner tonight?") == ["Pasta?"]


def test_a_member_off_the_allowlist_is_ignored_and_nothing_of_theirs_is_stored(stack: Stack) -> None:
    ana, group = stack.new_user(), new_group()
    stranger = post(stack, group, NOT_ALLOWED_USER, "@stepwise_bot what is on the list?", name="Eve")
    assert action(stranger) == "not_allowed"
    assert inbox_items(stack, group) == [] and stack.stored(group) == []
    stack.anthropic.script(text("Hi."))
    assert say(stack, group, ana, "@stepwise_bot hi") == ["Hi."]
    assert [m["content"] for m in stack.stored(group)] == ["hi", "Hi."], "the stranger's words are nowhere"


def test_allowed_chat_ids_keeps_it_silent_in_other_groups(stack: Stack) -> None:
    ana, served, other = stack.new_user(), new_group(), new_group()
    stack.emulation.config.env["ALLOWED_CHAT_IDS"] = str(served)
    update = post(stack, other, ana, "@stepwise_bot hi")
    assert (action(update), json.loads(update["answer"]["body"])["detail"]) == ("ignored", "group not served")
    stack.anthropic.script(text("Hi."))
    assert say(stack, served, ana, "@stepwise_bot hi") == ["Hi."]
    assert stack.telegram.messages(other) == []


def test_the_groups_list_is_shared_by_two_members_and_apart_from_each_members_own(stack: Stack) -> None:
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


def test_the_groups_reminders_are_the_groups_and_fire_for_the_member_who_set_them(clock_stack: Stack) -> None:
    stack = clock_stack
    ana, rui, group = stack.new_user(), stack.new_user(), new_group()
    reminder = {"text": "buy the cake", "in_minutes": 60}
    stack.anthropic.script(tool_use(("set_reminder", reminder)), text("Set."))
    say(stack, group, ana, "@stepwise_bot remind us in an hour to buy the cake")
    stack.anthropic.script(tool_use(("list_reminders", {})), text("One."))
    say(stack, group, rui, "@stepwise_bot what reminders do we have?", name="Rui")
    listed = stack.anthropic.requests[-1]["messages"][-1]["content"][0]["content"]
    assert listed.startswith("1 reminder:\n#1 reminder") and "buy the cake" in listed
    stack.anthropic.script(tool_use(("list_reminders", {})), text("None."))
    stack.say(ana, "what reminders do I have?")
    assert stack.anthropic.requests[-1]["messages"][-1]["content"][0]["content"] == "No reminders."
    table = stack.emulation.table("RemindersTable")
    (item,) = table.query(KeyConditionExpression=Key("user_id").eq(group) & Key("sk").begins_with("r#"))[
        "Items"
    ]
    assert (item["chat_id"], item["member"]) == (group, ana)
    stack.emulation.advance_clock(timedelta(minutes=61))
    fired_now = [f.name for f in stack.emulation.fire_due_schedules()]  # the stack is shared
    assert [name for name in fired_now if name.startswith(f"u{group}-")] == [f"u{group}-r1"]
    stack.emulation.wait_idle(group)
    assert stack.replies(group)[-1] == "⏰ Reminder: buy the cake"
    fired = max(
        (e for e in stack.emulation.executions() if e["name"].startswith(f"chat{group}-")),
        key=lambda e: e["startDate"],
    )
    started = json.loads(stack.emulation.describe(fired["name"])["input"])
    assert started["turn"]["user_id"] == ana, "its turn counts against Ana, who set it"


def test_a_private_memory_never_reaches_a_groups_prompt_nor_the_groups_a_private_one(stack: Stack) -> None:
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


def test_sender_names_are_in_the_prompt_and_the_history(stack: Stack) -> None:
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


def press(stack: Stack, user: int, message: dict[str, Any], label: str, name: str) -> str:
    """Press a button of a group's message as `user`; returns what Telegram shows them."""
    rows = message["reply_markup"]["inline_keyboard"]
    (button,) = [b for row in rows for b in row if b["text"].startswith(label)]
    chat = {"id": message["chat_id"], "type": "supergroup", "title": "Local group"}
    sent = {"message_id": message["message_id"], "date": 0, "text": message["text"], "chat": chat}
    update = updates.callback_query(user, button["callback_data"], sent)
    update["callback_query"]["from"]["first_name"] = name
    stack.emulation.post_update(update)
    answers = stack.telegram.calls("answerCallbackQuery")
    return str(answers[-1]["params"].get("text", ""))


def test_only_the_askers_tap_resumes_an_approval(stack: Stack) -> None:
    ana, rui, group = stack.new_user(), stack.new_user(), new_group()
    stack.anthropic.script(tool_use(("add_task", {"title": "bread"})), text("Added."))
    say(stack, group, ana, "@stepwise_bot add bread")
    stack.anthropic.script(tool_use(("delete_task", {"task_id": 1})), text("Deleted."))
    update = post(stack, group, ana, "@stepwise_bot delete the bread task")
    turn = stack.emulation.wait_until_taken(group, update["update_id"])
    buttons = stack.buttons(group)
    told = press(stack, rui, buttons, "Approve", "Rui")
    assert told == "Only the member who asked (Ana) can answer this."
    assert press(stack, NOT_ALLOWED_USER, buttons, "Approve", "Eve") == told
    assert stack.emulation.describe(turn)["status"] == "RUNNING" and len(stack.tasks(group)) == 1
    assert press(stack, ana, buttons, "Approve", "Ana") == "Approved ✅"
    assert stack.emulation.wait(turn)["status"] == "SUCCEEDED"
    assert stack.tasks(group) == [] and stack.replies(group)[-1] == "Deleted."


def test_a_groups_model_request_holds_none_of_the_owners_notes(stack: Stack, tmp_path: Path) -> None:
    (tmp_path / "SOUL.md").write_text("Warm and brief.", encoding="utf-8")
    (tmp_path / "USER.md").write_text("- My name is Ada; my bank PIN hint is the cat.", encoding="utf-8")
    (tmp_path / "GROUP.md").write_text("- This is the Silva family.", encoding="utf-8")
    stack.emulation.config.env["PERSONA_DIR"] = str(tmp_path)
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
    "command", ["/usage", "/voice on", "/connect laptop", "/jobs", "/timezone Asia/Tokyo"]
)
def test_commands_about_one_person_point_to_the_private_chat(stack: Stack, command: str) -> None:
    ana, group = stack.new_user(), new_group()
    name = command.split()[0]
    assert say(stack, group, ana, command) == [
        f"{name} is about you alone: ask me in our private chat (open my profile and tap Message)."
    ]
    assert stack.anthropic.requests == []


def test_a_groups_answer_comes_as_messages_never_as_drafts(stack: Stack) -> None:
    ana, group = stack.new_user(), new_group()
    stack.emulation.config.env["DRAFT_INTERVAL_SECONDS"] = "0.01"
    stack.anthropic.script(text("A long answer " * 40))
    say(stack, group, ana, "@stepwise_bot tell me something long")
    assert stack.telegram.drafts(group) == [] and len(stack.telegram.messages(group)) == 1


def test_bad_input_is_answered_200_and_starts_nothing(stack: Stack) -> None:
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
    executions = len(stack.emulation.executions())
    answers = [stack.emulation.post_update(update) for update in bad]
    assert [a["statusCode"] for a in answers] == [200] * len(bad)
    assert [a["headers"]["x-stepwise-action"] for a in answers] == [
        *["not_allowed"] * 3,
        *["ignored"] * 4,
        "invalid",
        "ignored",
    ]
    assert len(stack.emulation.executions()) == executions
    assert inbox_items(stack, group) == [] and stack.stored(group) == []


def test_a_groups_summary_is_the_groups_and_is_never_recalled_in_private(stack: Stack) -> None:
    from stepwise.memory.keys import summary_key
    from stepwise.telegram.conversation import Conversation
    from stepwise_local.local_memory import local_index

    ana, group = stack.new_user(), new_group()
    stack.emulation.config.env.update({"HISTORY_LIMIT": "2", "SUMMARY_THRESHOLD": "2"})
    summary = "The family plans a picnic at the lake on Sunday; Ana brings bread."

    def answer(request: dict[str, Any]) -> Any:
        if "long-term memory of a Telegram conversation" in str(request["system"]):
            return text(summary)
        return text("Noted.")

    stack.anthropic.default = answer
    say(stack, group, ana, "@stepwise_bot we plan a picnic at the lake on Sunday")
    say(stack, group, ana, "@stepwise_bot I will bring bread to the picnic")
    run = stack.emulation.run_summarizer()
    assert run["summarized"] >= 1
    record = local_index().records[summary_key(Conversation(group))]
    assert (record.metadata["user_id"], record.text) == (group, summary), "owned by the group"
    stack.say(ana, "what about the picnic at the lake on Sunday?")
    assert summary not in json.dumps(stack.anthropic.requests[-1]), "a group's summary stays in the group"


def test_usage_counts_against_the_member_who_asked(stack: Stack) -> None:
    ana, group = stack.new_user(), new_group()
    stack.anthropic.script(text("Hello."))
    say(stack, group, ana, "@stepwise_bot hello")
    table = stack.emulation.table("UsageTable")
    mine = table.query(KeyConditionExpression=Key("user_id").eq(ana))["Items"]
    assert any(item["sk"].startswith("day#") for item in mine), "counted against Ana"
    assert table.query(KeyConditionExpression=Key("user_id").eq(group))["Items"] == [], "never the group"


def test_new_in_a_group_that_is_not_a_forum_opens_nothing_and_says_so(stack: Stack) -> None:
    ana, group = stack.new_user(), new_group()
    assert say(stack, group, ana, "/new Trip") == [NOT_A_FORUM]
    assert stack.telegram.topics(group) == {}
    assert all("message_thread_id" not in m for m in stack.telegram.messages(group))
    stack.telegram.forums.add(group)  # an admin turns Topics on
    say(stack, group, ana, "/new Trip")
    assert list(stack.telegram.topics(group).values()) == ["Trip"]
