"""What the offline model tells the user about tool results: sentences to the user, never the texts the
tools write for the model."""

from __future__ import annotations

from typing import Any

import pytest

from stepwise.approvals.lifecycle import DENIED, EXPIRED, UNAVAILABLE
from stepwise.model.types import ModelRequest
from stepwise.offline.api import OfflineModel
from stepwise.states.call_model import limit_result
from stepwise.tools.catalog import build_registry
from stepwise.tools.registry import ToolError
from stepwise_local.in_memory.tasks import InMemoryTaskRepository

MODEL_FACING = ("the user", "The user", "Invalid arguments", "Denied by", "task_id", "String should", "tool")


def reply_after(name: str, args: dict[str, Any], result: str, is_error: bool = True) -> str:
    """The offline model's reply once the call `name(args)` returned `result`."""
    messages = [
        {"role": "user", "content": [{"type": "text", "text": "…"}]},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": name, "input": args}]},
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "t1", "content": result, "is_error": is_error}
            ],
        },
    ]
    response = OfflineModel().complete(ModelRequest(model="m", max_tokens=100, system=[], messages=messages))
    return str(response.content[0]["text"])


def invalid_arguments(name: str, args: dict[str, Any]) -> str:
    """The registry's own text for a call with invalid arguments."""
    tasks = InMemoryTaskRepository()
    registry = build_registry(tasks=tasks, ledger=tasks.ledger)
    with pytest.raises(ToolError) as raised:
        registry.parse(name, args)
    return str(raised.value)


@pytest.mark.parametrize(
    ("name", "args", "result", "reply"),
    [
        (
            "complete_task",
            {"task_id": 99},
            "There is no task #99 on the user's list.",
            "⚠️ There's no task #99 on your list.",
        ),
        (
            "delete_task",
            {"task_id": 3},
            DENIED,
            "You said no, so I didn't delete task #3. Nothing was changed.",
        ),
        (
            "update_task",
            {"task_id": 2, "title": "x"},
            EXPIRED,
            "⚠️ No answer came in time, so I didn't change task #2. Nothing was changed.",
        ),
        (
            "forget",
            {"memory_id": "fact-1"},
            UNAVAILABLE,
            "⚠️ I couldn't ask for your approval, so I didn't forget that memory. Nothing was changed.",
        ),
        (
            "add_task",
            {"title": "x" * 201},
            invalid_arguments("add_task", {"title": "x" * 201}),
            "⚠️ I couldn't add that task: the title should have at most 200 characters.",
        ),
        (
            "complete_task",
            {"task_id": 10**12},
            invalid_arguments("complete_task", {"task_id": 10**12}),
            f"⚠️ There's no task #{10**12} on your list.",
        ),
        (
            "add_task",
            {},
            invalid_arguments("add_task", {}),
            "⚠️ I couldn't add that task: the title is missing.",
        ),
        (
            "delete_task",
            {"task_id": 4},
            "The delete_task tool failed unexpectedly; nothing more is known.",
            "⚠️ Something went wrong while I tried to delete task #4; please try again.",
        ),
        (
            "cancel_reminder",
            {"reminder_id": 5},
            "There is no reminder #5 for this user.",
            "⚠️ I couldn't cancel that reminder: There's no reminder #5.",
        ),
        (
            "set_reminder",
            {"text": "x", "in_minutes": 5},
            "The user has 100 reminders, the most allowed; cancel one first.",
            "⚠️ I couldn't set that reminder: You have 100 reminders, the most allowed: cancel one first.",
        ),
        (
            "forget",
            {"memory_id": "fact-9"},
            "There is no memory fact-9 for this user.",
            "⚠️ I have no memory fact-9.",
        ),
        (
            "complete_task",
            {"task_id": 1},
            str(limit_result("t1", 5)["content"]),
            "⚠️ I stopped before this one: one message can run at most 5 rounds of actions.",
        ),
        ("nonsense", {}, "Unknown tool 'nonsense'. Available tools: add_task.", "⚠️ I can't do that here."),
    ],
)
def test_tool_results_written_for_the_model_reach_the_user_as_plain_sentences(
    name: str, args: dict[str, Any], result: str, reply: str
) -> None:
    said = reply_after(name, args, result)
    assert said == reply
    assert not [phrase for phrase in MODEL_FACING if phrase in said]


def test_results_that_already_speak_to_the_user_pass_through() -> None:
    assert reply_after("add_task", {"title": "milk"}, "Added task #1: milk", False) == "Added task #1: milk"
    shown = reply_after(
        "get_task", {"task_id": 1}, "#1 [ ] milk\nDue: 2026-12-01 09:00 (the user's time zone)", False
    )
    assert shown == "#1 [ ] milk\nDue: 2026-12-01 09:00 (your time zone)"


def test_a_denied_call_without_its_arguments_still_reads_well() -> None:
    assert (
        reply_after("delete_task", {}, DENIED)
        == "You said no, so I didn't delete that task. Nothing was changed."
    )
