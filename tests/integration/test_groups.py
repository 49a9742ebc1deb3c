"""Groups through the real state machine (moto), with the fake Bot API: the wiring of a group's turn (a
mention, a reply to the bot and a command for it answered), unaddressed messages costing one webhook
invocation each and no DynamoDB request (counted by the emulation), a group's reminder fired by the scheduler
for the member who set it, and the summarizer's summary of a group kept to the group. What groups do in a
turn (who is answered, the group's own list and memories, senders, approvals, the owner's notes, commands
about one person, drafts, usage, bad input) is tested on the in-memory stack
(tests/behaviour/test_groups.py)."""

from __future__ import annotations

import itertools
import json
from datetime import timedelta
from typing import Any

from boto3.dynamodb.conditions import Key
from support.stack import Stack
from support.turn_fakes import user_texts

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
    fired_now = [
        f.name for f in stack.emulation.fire_due_schedules(prefix=f"u{group}-")
    ]  # the stack is shared
    assert fired_now == [f"u{group}-r1"]
    stack.emulation.wait_idle(group)
    assert stack.replies(group)[-1] == "⏰ Reminder: buy the cake"
    fired = max(
        (e for e in stack.emulation.executions() if e["name"].startswith(f"chat{group}-")),
        key=lambda e: e["startDate"],
    )
    started = json.loads(stack.emulation.describe(fired["name"])["input"])
    assert started["turn"]["user_id"] == ana, "its turn counts against Ana, who set it"


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
