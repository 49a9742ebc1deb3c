"""The offline model's task intents and its answers."""

from __future__ import annotations

from typing import Any

import pytest

from stepwise.model.types import ModelRequest
from stepwise.offline.api import OfflineModel, parse_intent
from stepwise.tools.catalog import build_registry
from stepwise_local.in_memory.ledger import InMemoryToolCallLedger
from stepwise_local.in_memory.tasks import InMemoryTaskRepository


@pytest.mark.parametrize(
    ("text", "calls"),
    [
        ("add buy milk", [("add_task", {"title": "buy milk"})]),
        ("Add: water the plants.", [("add_task", {"title": "water the plants"})]),
        ("remind me to call mom", [("add_task", {"title": "call mom"})]),
        ("list", [("list_tasks", {"status": "all"})]),
        ("what's on my list?", [("list_tasks", {"status": "all"})]),
        ("show my tasks", [("list_tasks", {"status": "all"})]),
        ("list done", [("list_tasks", {"status": "completed"})]),
        ("show pending tasks", [("list_tasks", {"status": "pending"})]),
        ("show task 2", [("get_task", {"task_id": 2})]),
        ("task #4", [("get_task", {"task_id": 4})]),
        ("rename 2 to buy oat milk", [("update_task", {"task_id": 2, "title": "buy oat milk"})]),
        ("rename task #2 to “call mum”", [("update_task", {"task_id": 2, "title": "call mum"})]),
        ("done 3", [("complete_task", {"task_id": 3})]),
        ("done 1 and 3", [("complete_task", {"task_id": 1}), ("complete_task", {"task_id": 3})]),
        ("3 is done", [("complete_task", {"task_id": 3})]),
        ("delete 3", [("delete_task", {"task_id": 3})]),
        ("remove task #5", [("delete_task", {"task_id": 5})]),
        # out-of-range numbers still reach the tools, which answer "there is no task #…"
        ("done " + "9" * 41, [("complete_task", {"task_id": int("9" * 41)})]),
        (
            "delete 2, " + "9" * 100,
            [("delete_task", {"task_id": 2}), ("delete_task", {"task_id": int("9" * 100)})],
        ),
        ("show task " + "1" * 40, [("get_task", {"task_id": int("1" * 40)})]),
        (
            "done " + ", ".join(map(str, range(1, 21))),
            [("complete_task", {"task_id": n}) for n in range(1, 21)],
        ),
    ],
)
def test_task_commands_become_the_tool_calls_the_real_model_would_make(
    text: str, calls: list[tuple[str, dict[str, Any]]]
) -> None:
    assert parse_intent(text) == calls


@pytest.mark.parametrize(
    "text",
    [
        "hello",
        "tell me a joke",
        "add",
        "delete everything",
        "done",
        "what time is it",
        "done " + "9" * 101,  # no task list is that long; and Python refuses ints of over 4300 digits
        "delete " + "9" * 5000,
        "rename " + "9" * 5000 + " to x",
        "done " + ",".join(["1"] * 21),  # more task numbers than one command may name
        "delete " + ", ".join(map(str, range(1, 2000))),
    ],
)
def test_other_text_is_not_a_task_command(text: str) -> None:
    assert parse_intent(text) is None


def request(messages: list[dict[str, Any]], tool_choice: dict[str, Any] | None = None) -> ModelRequest:
    return ModelRequest(
        model="m",
        max_tokens=100,
        system=[],
        messages=messages,
        tools=build_registry(tasks=InMemoryTaskRepository(), ledger=InMemoryToolCallLedger()).api_tools(),
        tool_choice=tool_choice,
    )


def test_the_offline_model_calls_tools_then_reports_their_results() -> None:
    model = OfflineModel()
    first = model.complete(request([{"role": "user", "content": [{"type": "text", "text": "done 1 and 2"}]}]))
    assert first.stop_reason == "tool_use"
    assert [(b["name"], b["input"]) for b in first.tool_uses] == [
        ("complete_task", {"task_id": 1}),
        ("complete_task", {"task_id": 2}),
    ]
    results = [
        {"type": "tool_result", "tool_use_id": b["id"], "content": text, "is_error": err}
        for b, (text, err) in zip(
            first.tool_uses, [("Completed task #1: a", False), ("There is no task #2.", True)], strict=True
        )
    ]
    second = model.complete(
        request(
            [
                {"role": "user", "content": [{"type": "text", "text": "done 1 and 2"}]},
                {"role": "assistant", "content": first.content},
                {"role": "user", "content": results},
            ]
        )
    )
    assert second.stop_reason == "end_turn"
    assert second.content[0]["text"] == "Completed task #1: a\n⚠️ There's no task #2 on your list."


def test_without_tools_or_with_tools_disabled_it_answers_in_words() -> None:
    message = [{"role": "user", "content": [{"type": "text", "text": "add milk"}]}]
    assert OfflineModel().complete(request(message, tool_choice={"type": "none"})).stop_reason == "end_turn"
    no_tools = ModelRequest(model="m", max_tokens=10, system=[], messages=message)
    assert OfflineModel().complete(no_tools).stop_reason == "end_turn"


def test_a_result_without_words_reads_done() -> None:
    tool_use = {"type": "tool_use", "id": "t1", "name": "complete_task", "input": {"task_id": 1}}
    result = {"type": "tool_result", "tool_use_id": "t1", "content": "", "is_error": False}
    messages = [
        {"role": "user", "content": [{"type": "text", "text": "done 1"}]},
        {"role": "assistant", "content": [tool_use]},
        {"role": "user", "content": [result]},
    ]
    assert OfflineModel().complete(request(messages)).content[0]["text"] == "Done."
