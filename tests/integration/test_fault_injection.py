"""Faults injected at every state of a turn, through the real state machine: what the user sees stays put.

Each scenario runs once per fault and asserts what matters to the user: every message answered exactly once,
in order; no tool run twice (one task, one audit entry per call); nothing lost (both messages stored); and
the chat free afterwards. The offline model answers (deterministic, whatever is retried), except where the
faults are the model's own.
"""

from __future__ import annotations

import json
import threading
from typing import Any

import pytest
from boto3.dynamodb.conditions import Key
from support.stack import Stack

from stepwise.prompt.system import is_turn_context
from stepwise.states.call_model import FALLBACK_NOTE
from stepwise.states.deliver import FRIENDLY_ERROR
from stepwise_local import updates
from stepwise_local.anthropic_server import error, hang, text
from stepwise_local.template import Template

OFFLINE = {"ANTHROPIC_BASE_URL": "", "ANTHROPIC_API_KEY_PARAMETER": ""}
ADDED = "Added task #1: buy milk"
DELETED = "Deleted task #1: buy milk"
# Every function a turn runs (FinishTurn sends, saves and frees the chat; RunTools also takes the chat back
# after an approval).
TURN_STATES = ["LoadContextFunction", "CallModelFunction", "RunToolsFunction", "FinishTurnFunction"]
APPROVAL_STATES = ["RunToolsFunction", "RequestApprovalFunction"]
# Every table a turn uses: the /mcp endpoint's tokens table is throttled in test_mcp_endpoint.py, the
# outside MCP servers' table (used only by a turn with outside tools) in test_mcp_client.py, and the
# background jobs' table (used by jobs and the turns that start them) in test_jobs.py.
TABLES = sorted(
    spec.logical_id
    for spec in Template().tables()
    # the tables a turn of built-in tools never touches (the /mcp endpoint's, outside servers', jobs',
    # people's own accounts', secretary mode's: its own faults are in test_secretary_connections.py)
    if spec.logical_id
    not in ("ConnectionsTable", "RemoteToolsTable", "JobsTable", "AccountsTable", "SecretaryTable")
)


# ---------------------------------------------------------------------------------------------- helpers
def deliver(stack: Stack, update: dict[str, Any], attempts: int = 5) -> dict[str, Any]:
    """POST an update as Telegram does: a failed or non-2xx delivery is delivered again."""
    for _ in range(attempts):
        try:
            response = stack.emulation.post_update(update)
        except Exception:  # the webhook's Lambda died: API Gateway answers 5xx, Telegram retries
            continue
        if response["statusCode"] < 500:
            return response
    raise AssertionError(f"update {update['update_id']} never delivered")


def say(stack: Stack, user: int, text_: str) -> None:
    update = updates.text_message(user, text_)
    deliver(stack, update)
    stack.emulation.wait_for_update(user, update["update_id"])
    stack.emulation.wait_idle(user)


def audit(stack: Stack, user: int) -> list[tuple[str, str]]:
    items = stack.emulation.table("AuditTable").query(KeyConditionExpression=Key("user_id").eq(user))["Items"]
    return [(item["tool"], item["outcome"]) for item in items]


def chat_is_free(stack: Stack, chat: int) -> bool:
    items = stack.emulation.table("InboxTable").query(KeyConditionExpression=Key("chat_id").eq(chat))["Items"]
    return not any(i["sk"].startswith("q#") or "holder" in i for i in items)


def add_milk(stack: Stack, user: int) -> None:
    say(stack, user, "add buy milk")


def expect_added(stack: Stack, user: int) -> None:
    assert stack.replies(user) == [ADDED], "answered exactly once"
    assert [t["title"] for t in stack.tasks(user)] == ["buy milk"], "the tool ran once"
    assert audit(stack, user) == [("add_task", "ok")], "one audit entry"
    assert [(m["role"], m["content"]) for m in stack.stored(user)] == [
        ("user", "add buy milk"),
        ("assistant", ADDED),
    ], "nothing lost, nothing twice"
    assert chat_is_free(stack, user)


def delete_with_approval(stack: Stack, user: int) -> None:
    update = updates.text_message(user, "delete 1")
    deliver(stack, update)
    buttons = stack.buttons(user)
    press = updates.callback_query(
        user,
        buttons["reply_markup"]["inline_keyboard"][0][0]["callback_data"],
        {"message_id": buttons["message_id"], "date": 0, "text": "", "chat": {"id": user, "type": "private"}},
    )
    assert json.loads(deliver(stack, press)["body"])["action"] == "decided"
    stack.emulation.wait_for_update(user, update["update_id"])
    stack.emulation.wait_idle(user)


def expect_deleted(stack: Stack, user: int) -> None:
    replies = stack.replies(user)
    assert replies[0] == ADDED and replies[-1] == DELETED and len(replies) == 3, replies
    shown = [m for m in stack.telegram.messages(user) if "Approval needed" in stack.telegram.text_of(m)]
    assert len(shown) == 1, "the buttons once"
    assert stack.tasks(user) == [], "deleted once"
    assert audit(stack, user) == [("add_task", "ok"), ("delete_task", "ok")]
    contents = [m["content"] for m in stack.stored(user)]
    assert contents == ["add buy milk", ADDED, "delete 1", DELETED]
    assert chat_is_free(stack, user)


# ---------------------------------------------------------------------------- crashes before and after
@pytest.mark.parametrize("when", ["before", "after"])
@pytest.mark.parametrize("function", ["WebhookFunction", *TURN_STATES])
def test_a_crash_before_or_after_a_states_side_effect_changes_nothing_the_user_sees(
    stack: Stack, function: str, when: str
) -> None:
    # Given the offline model and a function that dies once, before its handler runs or after it ran
    stack.emulation.config.env.update(OFFLINE)
    user = stack.new_user()
    stack.emulation.crash(function, when)
    # When the user adds a task (a tool round)
    add_milk(stack, user)
    # Then the retry (Step Functions', or Telegram's for the webhook) gives exactly the usual outcome
    assert not stack.emulation._crashes.get(function), "the crash happened"
    expect_added(stack, user)


@pytest.mark.parametrize("when", ["before", "after"])
@pytest.mark.parametrize("function", APPROVAL_STATES)
def test_a_crash_around_an_approval_neither_loses_nor_repeats_it(
    stack: Stack, function: str, when: str
) -> None:
    stack.emulation.config.env.update(OFFLINE)
    user = stack.new_user()
    add_milk(stack, user)
    stack.emulation.crash(function, when)
    delete_with_approval(stack, user)
    assert not stack.emulation._crashes.get(function), "the crash happened"
    expect_deleted(stack, user)


@pytest.mark.parametrize("when", ["before", "after"])
def test_a_crash_of_fail_turn_still_tells_the_user_once(stack: Stack, when: str) -> None:
    user = stack.new_user()
    stack.emulation.config.env["FALLBACK_MODEL"] = "off"
    stack.anthropic.always(error(500))
    stack.emulation.crash("FinishTurnFunction", when)  # FailTurn: FinishTurn with the error
    say(stack, user, "hello")
    assert stack.replies(user) == [FRIENDLY_ERROR]
    assert [m["content"] for m in stack.stored(user)] == ["hello"], "the message is kept for the next turn"
    assert chat_is_free(stack, user)


@pytest.mark.parametrize("when", ["before", "after"])
def test_a_crash_of_use_fallback_still_lets_the_rules_model_answer_once(stack: Stack, when: str) -> None:
    user = stack.new_user()
    stack.anthropic.always(error(529, "overloaded_error"))
    stack.emulation.crash("UseFallbackFunction", when)
    say(stack, user, "add buy milk")
    (reply,) = stack.replies(user)
    assert reply.startswith(FALLBACK_NOTE.strip("_")) and reply.endswith(ADDED)
    assert [t["title"] for t in stack.tasks(user)] == ["buy milk"]


# ------------------------------------------------------------------------------- failures in the middle
def test_telegram_answers_but_the_record_of_it_fails_the_reply_is_sent_at_least_once(stack: Stack) -> None:
    """The one window Telegram leaves open: sendMessage succeeded, recording it did not. The retry sends the
    chunk again (a rare duplicate) rather than risk losing it."""
    stack.emulation.config.env.update(OFFLINE)
    user = stack.new_user()
    stack.emulation.throttle("TurnsTable", 1, function="FinishTurnFunction", operation="UpdateItem")
    add_milk(stack, user)
    assert stack.replies(user) == [ADDED, ADDED]
    assert [t["title"] for t in stack.tasks(user)] == ["buy milk"]
    assert chat_is_free(stack, user)


@pytest.mark.parametrize(
    ("function", "table", "operation"),
    [
        ("LoadContextFunction", "MessagesTable", "PutItem"),  # messages taken, not stored yet
        ("LoadContextFunction", "ChatsTable", "UpdateItem"),  # stored, not counted yet
        ("RunToolsFunction", "TurnsTable", "PutItem"),  # the tool ran, its result not recorded
        ("FinishTurnFunction", "InboxTable", "UpdateItem"),  # messages done, the chat not yet free
        ("FinishTurnFunction", "ChatsTable", "UpdateItem"),  # the reply stored, not counted yet
    ],
)
def test_a_failure_between_two_side_effects_of_a_state_is_retried_without_loss_or_repeat(
    stack: Stack, function: str, table: str, operation: str
) -> None:
    stack.emulation.config.env.update(OFFLINE)
    user = stack.new_user()
    stack.emulation.throttle(table, 1, function=function, operation=operation)
    add_milk(stack, user)
    assert stack.emulation.throttled[-1] == (function, table, operation)
    expect_added(stack, user)


# ----------------------------------------------------------------------------------- DynamoDB throttling
@pytest.mark.parametrize("table", TABLES)
def test_throttling_past_the_sdks_retries_on_any_table_is_absorbed_by_the_state_machine(
    stack: Stack, table: str
) -> None:
    # Given every table throttled for its next two requests (each one a ProvisionedThroughputExceeded that
    # the SDK has given up on), during a turn with a tool and an approval (a budget, so that the offline turn
    # reads the usage table too)
    stack.emulation.config.env.update({**OFFLINE, "DAILY_TOKEN_BUDGET": "1000000"})
    user = stack.new_user()
    add_milk(stack, user)
    before = len(stack.emulation.throttled)
    stack.emulation.throttle(table, 2)
    delete_with_approval(stack, user)
    assert len(stack.emulation.throttled) - before == 2, f"{table} was throttled twice"
    expect_deleted(stack, user)


def test_a_messages_table_down_for_good_loses_no_message(stack: Stack) -> None:
    # Given the messages table refusing every request for a while
    stack.emulation.config.env.update(OFFLINE)
    user = stack.new_user()
    stack.emulation.throttle("MessagesTable", 1000)
    update = updates.text_message(user, "add buy milk")
    deliver(stack, update)
    stack.emulation.wait_idle(user, timeout=60)
    # Then the user is told (a bounded number of times: no loop), and the message waits in the inbox
    errors = stack.replies(user)
    assert errors and set(errors) == {FRIENDLY_ERROR} and len(errors) <= 3
    inbox = stack.emulation.table("InboxTable")
    pending = inbox.query(KeyConditionExpression=Key("chat_id").eq(user))["Items"]
    assert [i["sk"] for i in pending if i["sk"].startswith("q#")] == [f"q#{update['update_id']:020d}"]
    # And when the table is back, the next message brings both to the model, answered once
    stack.emulation.clear_crashes()
    stack.anthropic.reset()
    stack.emulation.config.env.clear()
    say(stack, user, "are you back?")
    asked = [m["content"] for m in stack.stored(user) if m["role"] == "user"]
    assert asked == ["add buy milk", "are you back?"]
    (request,) = stack.anthropic.requests
    texts = [b["text"] for m in request["messages"] for b in m["content"] if not is_turn_context(b)]
    assert texts == ["add buy milk", "are you back?"]
    assert stack.replies(user)[len(errors) :] == ["You said: are you back?"]
    assert chat_is_free(stack, user)


# ---------------------------------------------------------------------------------------- Telegram faults
@pytest.mark.parametrize(
    ("status", "times"),
    [(429, 1), (500, 2), (502, 3)],
    ids=["429-retry-after", "500-twice", "502-three-times"],
)
def test_telegram_rate_limits_and_server_errors_give_one_reply(stack: Stack, status: int, times: int) -> None:
    stack.emulation.config.env.update(OFFLINE)
    user = stack.new_user()
    stack.telegram.fail_next("sendMessage", status, times=times)
    add_milk(stack, user)
    expect_added(stack, user)


def test_a_telegram_that_keeps_failing_still_frees_the_chat_and_keeps_the_answer(stack: Stack) -> None:
    stack.emulation.config.env.update(OFFLINE)
    user = stack.new_user()
    stack.telegram.fail_next("sendMessage", 502, times=50)
    add_milk(stack, user)
    assert stack.replies(user) == []
    assert [m["content"] for m in stack.stored(user)] == ["add buy milk", ADDED], "history keeps the answer"
    assert chat_is_free(stack, user)
    stack.telegram.clear_faults()
    say(stack, user, "list")
    assert stack.replies(user) == ["1 task:\n#1 [ ] buy milk"]


# -------------------------------------------------------------------------------------------- model faults
@pytest.mark.parametrize(
    "failure",
    [error(429, "rate_limit_error"), error(500), error(529, "overloaded_error"), hang(2.0)],
    ids=["429", "500", "529", "timeout"],
)
def test_a_model_that_fails_then_recovers_gives_one_reply(stack: Stack, failure: Any) -> None:
    user = stack.new_user()
    stack.emulation.config.env["ANTHROPIC_TIMEOUT_SECONDS"] = "0.5"
    stack.anthropic.script(failure, failure, text("Here I am."))
    say(stack, user, "hello")
    assert stack.replies(user) == ["Here I am."]
    assert [m["content"] for m in stack.stored(user)] == ["hello", "Here I am."]
    assert chat_is_free(stack, user)


# ----------------------------------------------------------------------- duplicate and concurrent delivery
def test_the_same_update_delivered_concurrently_is_answered_once(stack: Stack) -> None:
    stack.emulation.config.env.update(OFFLINE)
    user = stack.new_user()
    update = updates.text_message(user, "add buy milk")
    threads = [threading.Thread(target=deliver, args=(stack, update)) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    stack.emulation.wait_for_update(user, update["update_id"])
    stack.emulation.wait_idle(user)
    deliver(stack, update)  # and once more, long after
    stack.emulation.wait_idle(user)
    expect_added(stack, user)


def test_concurrent_presses_of_both_buttons_decide_once(stack: Stack) -> None:
    stack.emulation.config.env.update(OFFLINE)
    user = stack.new_user()
    add_milk(stack, user)
    update = updates.text_message(user, "delete 1")
    deliver(stack, update)
    buttons = stack.buttons(user)
    chat = {"id": user, "type": "private"}
    sent = {"message_id": buttons["message_id"], "date": 0, "text": "", "chat": chat}
    presses = [
        updates.callback_query(user, button["callback_data"], sent)
        for row in buttons["reply_markup"]["inline_keyboard"]
        for button in row
    ] * 2
    answers: list[str] = []
    threads = [
        threading.Thread(target=lambda p=p: answers.append(json.loads(deliver(stack, p)["body"])["action"]))
        for p in presses
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    stack.emulation.wait_for_update(user, update["update_id"])
    stack.emulation.wait_idle(user)
    assert sorted(answers) == ["already_decided"] * 3 + ["decided"]
    assert len(stack.replies(user)) == 3
    assert [tool for tool, _ in audit(stack, user)].count("delete_task") == 1


def test_bursts_of_five_in_three_chats_at_once_are_each_answered_in_order(stack: Stack) -> None:
    users = [stack.new_user() for _ in range(3)]
    sent = {user: [updates.text_message(user, f"{user} part {n}") for n in range(1, 6)] for user in users}

    def burst(user: int) -> None:
        for update in sent[user]:
            deliver(stack, update)

    threads = [threading.Thread(target=burst, args=(user,)) for user in users]
    with stack.emulation.holding("FinishTurnFunction"):  # each chat's first turn runs until its burst is in
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    for user in users:
        stack.emulation.wait_idle(user)
        texts = [u["message"]["text"] for u in sent[user]]
        assert [m["content"] for m in stack.stored(user) if m["role"] == "user"] == texts, "in order, once"
        replies = stack.replies(user)
        # One turn for what came before the first turn loaded its context, one for the rest
        assert 1 <= len(replies) <= 2 and replies[-1] == f"You said: {texts[-1]}"
