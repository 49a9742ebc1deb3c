"""Tools, approvals and the fallback through the real state machine on the emulation: the wiring of a tool
round (RunTools, the tasks and audit tables, the tool calls stored), of an approval (RequestApproval's task
token resumed by the tap through Step Functions), the ASL's own approval timeout (TimeoutSecondsPath) and
CallModel's retries and Catch to UseFallback. What tools and approvals do in a turn (the tool loop's limit,
tool_use blocks in order, other users' tasks, Deny, double presses and presses by others, cards and refusals,
a tool that raises, the rules model and the friendly error) is tested on the in-memory stack
(tests/behaviour/test_tools_and_approvals.py)."""

from __future__ import annotations

import json
from typing import Any

from support.stack import Stack

from stepwise.model.errors import ModelTransientError
from stepwise.states.call_model import FALLBACK_NOTE
from stepwise.tasks.dynamodb import DynamoTaskRepository
from stepwise_local.anthropic_server import error, text, tool_use


def tool_results(request: dict[str, Any]) -> list[dict[str, Any]]:
    """The tool_result blocks a request sends back (its last message)."""
    return [b for b in request["messages"][-1]["content"] if b.get("type") == "tool_result"]


def seed_task(stack: Stack, user: int, title: str) -> None:
    DynamoTaskRepository(stack.emulation.table("TasksTable")).add(user, title, "", "2026-11-22T10:00:00.000Z")


def test_a_tool_round_trip_adds_the_task_for_that_user_and_confirms_it(stack: Stack) -> None:
    user = stack.new_user()
    stack.anthropic.script(
        tool_use(("add_task", {"title": "buy milk"})), text("Added **buy milk** to your list.")
    )
    execution = stack.say(user, "remind me to buy milk")
    assert execution["status"] == "SUCCEEDED"
    assert [(t["task_id"], t["title"], t["status"]) for t in stack.tasks(user)] == [
        (1, "buy milk", "pending")
    ]
    assert stack.replies(user) == ["Added buy milk to your list."]
    (result,) = tool_results(stack.anthropic.requests[1])
    assert result["content"] == "Added task #1: buy milk" and result["is_error"] is False
    assert [t["name"] for t in stack.anthropic.requests[0]["tools"]][:2] == ["add_task", "list_tasks"]
    # the stored assistant message carries the turn's tool calls, and the audit log has the call
    assistant = stack.stored(user)[-1]
    assert [call["name"] for call in json.loads(assistant["tool_calls"])] == ["add_task"]
    (entry,) = stack.emulation.table("AuditTable").query(
        KeyConditionExpression="user_id = :u", ExpressionAttributeValues={":u": user}
    )["Items"]
    assert (entry["tool"], entry["outcome"], entry["approval"]) == ("add_task", "ok", "not_needed")
    assert json.loads(entry["arguments"]) == {"title": "buy milk"} and entry["created_at"]


def delete_with_approval(stack: Stack, user: int) -> tuple[str, dict[str, Any]]:
    seed_task(stack, user, "buy milk")
    stack.anthropic.script(tool_use(("delete_task", {"task_id": 1})), text("Done as you decided."))
    name = stack.send(user, "delete the milk task")
    return name, stack.buttons(user)


def test_approve_deletes_and_shows_the_decision(stack: Stack) -> None:
    user = stack.new_user()
    name, message = delete_with_approval(stack, user)
    assert stack.telegram.text_of(message).splitlines()[:2] == [
        "🔐 Approval needed",
        "The assistant in this chat asks to delete task #1 “buy milk”.",
    ], "the request names who asks before the tap"
    assert stack.emulation.describe(name)["status"] == "RUNNING", "the turn waits for the tap"
    assert [t["title"] for t in stack.tasks(user)] == ["buy milk"]
    answers_before = len(stack.telegram.calls("answerCallbackQuery"))
    answer = stack.press(user, message, "Approve")
    assert json.loads(answer["body"])["action"] == "decided"
    assert stack.emulation.wait(name)["status"] == "SUCCEEDED"
    assert stack.tasks(user) == []
    (result,) = tool_results(stack.anthropic.requests[1])
    assert result["content"] == "Deleted task #1: buy milk"
    (answered,) = stack.telegram.calls("answerCallbackQuery")[answers_before:]
    assert answered["params"]["text"] == "Approved ✅"
    edited = stack.telegram.messages(user)[0]
    assert "✅ Approved" in stack.telegram.text_of(edited) and not edited.get("reply_markup")
    assert stack.replies(user)[-1] == "Done as you decided."


def test_no_answer_within_the_timeout_counts_as_deny(stack: Stack) -> None:
    user = stack.new_user()
    stack.emulation.config.env["APPROVAL_TIMEOUT_SECONDS"] = "1"
    name, message = delete_with_approval(stack, user)
    assert "No answer within 1 second counts as Deny." in stack.telegram.text_of(message)
    assert stack.emulation.wait(name, timeout=30)["status"] == "SUCCEEDED"
    assert [t["title"] for t in stack.tasks(user)] == ["buy milk"]
    (result,) = tool_results(stack.anthropic.requests[1])
    assert "did not answer the approval request in time" in result["content"]
    assert "No answer in time" in stack.telegram.text_of(stack.telegram.messages(user)[0])
    late = stack.press(user, message, "Approve")  # a press after the timeout changes nothing
    assert json.loads(late["body"])["action"] == "already_decided"
    assert [t["title"] for t in stack.tasks(user)] == ["buy milk"]


def test_when_the_model_api_is_down_the_rules_model_handles_task_commands(stack: Stack) -> None:
    user = stack.new_user()
    stack.anthropic.always(error(503, "api_error"))
    execution = stack.say(user, "add buy milk")
    assert execution["status"] == "SUCCEEDED"
    assert [t["title"] for t in stack.tasks(user)] == ["buy milk"]
    (reply,) = stack.replies(user)
    assert reply.startswith("(My language model is unavailable") and "Added task #1: buy milk" in reply
    assert stack.stored(user)[-1]["content"].startswith(FALLBACK_NOTE)
    assert ModelTransientError.__name__ in json.dumps(stack.emulation.history(execution["name"]), default=str)
