"""RunTools crashing after a tool's effect but before its result is recorded: Step Functions retries it, and
the tool-call ledger makes the effect happen once, with the result the first run produced."""

from __future__ import annotations

import json
from typing import Any

import pytest
from support.stack import Stack

from stepwise.tasks.dynamodb import DynamoTaskRepository
from stepwise.turn_records.dynamodb import DynamoTurnStore
from stepwise.turn_records.models import ModelStep
from stepwise_local.anthropic_server import text, tool_use
from stepwise_local.local_memory import local_index

CRASH = "RunTools died after the tool's effect"


def crash_once_after(monkeypatch: pytest.MonkeyPatch, tool: str) -> list[str]:
    """Make RunTools crash the first time it is about to record a result of `tool` (its effect is made)."""
    put_step = DynamoTurnStore.put_step
    crashed: list[str] = []

    def crashing(self: DynamoTurnStore, turn_id: str, step: ModelStep) -> None:
        names = {call["id"]: call["name"] for call in step.tool_uses}
        if not crashed and any(names.get(call_id) == tool for call_id in step.partial_results):
            crashed.append(turn_id)
            raise RuntimeError(CRASH)
        put_step(self, turn_id, step)

    monkeypatch.setattr(DynamoTurnStore, "put_step", crashing)
    return crashed


def run_tools_failures(stack: Stack, execution: str) -> list[dict[str, Any]]:
    """The RunTools attempts of an execution that failed (and were retried by the state machine)."""
    return [
        event
        for event in stack.emulation.history(execution)
        if event["type"] == "TaskFailed" and CRASH in json.dumps(event["taskFailedEventDetails"])
    ]


def tool_results(request: dict[str, Any]) -> list[dict[str, Any]]:
    return [b for b in request["messages"][-1]["content"] if b.get("type") == "tool_result"]


def audit(stack: Stack, user: int) -> list[tuple[str, str, str]]:
    items = stack.emulation.table("AuditTable").query(
        KeyConditionExpression="user_id = :u", ExpressionAttributeValues={":u": user}
    )["Items"]
    return [(item["tool"], item["outcome"], item["approval"]) for item in items]


def test_add_task_retried_after_a_crash_adds_one_task_and_skips_no_id(
    stack: Stack, monkeypatch: pytest.MonkeyPatch
) -> None:
    user = stack.new_user()
    crashed = crash_once_after(monkeypatch, "add_task")
    stack.anthropic.script(tool_use(("add_task", {"title": "buy milk"})), text("Added buy milk."))
    execution = stack.say(user, "remind me to buy milk")
    assert execution["status"] == "SUCCEEDED"
    assert crashed and len(run_tools_failures(stack, execution["name"])) == 1, "it crashed once, was retried"
    assert stack.replies(user) == ["Added buy milk."]
    assert [(t["task_id"], t["title"]) for t in stack.tasks(user)] == [(1, "buy milk")]
    (result,) = tool_results(stack.anthropic.requests[1])
    assert (result["content"], result["is_error"]) == ("Added task #1: buy milk", False)
    assert audit(stack, user) == [("add_task", "ok", "not_needed")]
    counter = stack.emulation.table("TasksTable").get_item(Key={"user_id": user, "task_id": 0})["Item"]
    assert counter["next_id"] == 1, "no id was skipped"


def test_an_approved_delete_retried_after_a_crash_reports_the_deletion(
    stack: Stack, monkeypatch: pytest.MonkeyPatch
) -> None:
    user = stack.new_user()
    DynamoTaskRepository(stack.emulation.table("TasksTable")).add(
        user, "milk", "", "2026-11-22T10:00:00.000Z"
    )
    crashed = crash_once_after(monkeypatch, "delete_task")
    stack.anthropic.script(tool_use(("delete_task", {"task_id": 1})), text("Deleted it."))
    name = stack.send(user, "delete the milk task")
    stack.press(user, stack.buttons(user), "Approve")
    assert stack.emulation.wait(name)["status"] == "SUCCEEDED"
    assert crashed and len(run_tools_failures(stack, name)) == 1
    assert stack.tasks(user) == []
    (result,) = tool_results(stack.anthropic.requests[1])
    assert (result["content"], result["is_error"]) == ("Deleted task #1: milk", False)
    assert stack.replies(user)[-1] == "Deleted it."
    assert len(stack.replies(user)) == 2, "the approval request and one reply"
    assert audit(stack, user) == [("delete_task", "ok", "approved")]


def test_remember_retried_after_a_crash_stores_one_memory(
    stack: Stack, monkeypatch: pytest.MonkeyPatch
) -> None:
    user = stack.new_user()
    crashed = crash_once_after(monkeypatch, "remember")
    stack.anthropic.script(tool_use(("remember", {"fact": "Takes coffee black"})), text("Noted."))
    execution = stack.say(user, "remember that I take my coffee black")
    assert execution["status"] == "SUCCEEDED"
    assert crashed and len(run_tools_failures(stack, execution["name"])) == 1
    mine = [r for r in local_index().records.values() if r.metadata.get("user_id") == user]
    assert [r.text for r in mine] == ["Takes coffee black"]
    (result,) = tool_results(stack.anthropic.requests[1])
    assert result["content"] == f"Remembered ({mine[0].key}): Takes coffee black" and not result["is_error"]
    assert stack.replies(user) == ["Noted."]
    assert audit(stack, user) == [("remember", "ok", "not_needed")]


def test_an_approved_forget_retried_after_a_crash_reports_what_it_forgot(
    stack: Stack, monkeypatch: pytest.MonkeyPatch
) -> None:
    user = stack.new_user()
    stack.anthropic.script(tool_use(("remember", {"fact": "Lock code 4711"})), text("Saved."))
    stack.say(user, "remember my lock code is 4711")
    (memory_id,) = [k for k, r in local_index().records.items() if r.metadata.get("user_id") == user]
    crashed = crash_once_after(monkeypatch, "forget")
    stack.anthropic.script(tool_use(("forget", {"memory_id": memory_id})), text("Forgotten."))
    name = stack.send(user, "forget the lock code")
    stack.press(user, stack.buttons(user), "Approve")
    assert stack.emulation.wait(name)["status"] == "SUCCEEDED"
    assert crashed and len(run_tools_failures(stack, name)) == 1
    assert memory_id not in local_index().records
    (result,) = tool_results(stack.anthropic.requests[-1])
    assert (result["content"], result["is_error"]) == (f"Forgot {memory_id}: Lock code 4711", False)
    assert stack.replies(user)[-1] == "Forgotten."
    assert [entry for entry in audit(stack, user) if entry[0] == "forget"] == [("forget", "ok", "approved")]
