"""The tool registry and the task tools, on an in-memory task store."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from stepwise.approvals.arguments import call_room
from stepwise.memory.service import MemoryService
from stepwise.telegram.conversation import Conversation, Scope
from stepwise.tools.catalog import build_registry
from stepwise.tools.registry import Tool, ToolContext, ToolError, ToolRegistry
from stepwise.tools.task_tools import MAX_TASK_ID, MAX_TITLE, TaskIdInput, task_tools
from stepwise_local.in_memory.embedder import LocalHashEmbedder
from stepwise_local.in_memory.tasks import InMemoryTaskRepository
from stepwise_local.in_memory.vector_index import InMemoryVectorIndex

_calls = itertools.count(1)


def catalog(memory: bool = True) -> ToolRegistry:
    """The whole catalog, as a deployment with (or without) long-term memory builds it."""
    tasks = InMemoryTaskRepository()
    service = MemoryService(LocalHashEmbedder(), InMemoryVectorIndex()) if memory else None
    return build_registry(tasks=tasks, ledger=tasks.ledger, memory=service)


REGISTRY = catalog()


@pytest.fixture
def tasks() -> InMemoryTaskRepository:
    return InMemoryTaskRepository()


def registry_of(tasks: InMemoryTaskRepository) -> ToolRegistry:
    """The task tools bound to `tasks`, with the ledger the store records in."""
    return ToolRegistry(task_tools(tasks), tasks.ledger)


def context(tasks: InMemoryTaskRepository, user_id: int = 1) -> ToolContext:
    """The context of a new tool call (each gets its own call id)."""
    return ToolContext(
        Scope(Conversation(user_id), user_id),
        turn_id="t",
        call_id=f"t:toolu_{next(_calls)}",
        now="2026-11-22T10:00:00.000Z",
    )


def call(
    tasks: InMemoryTaskRepository, name: str, args: dict[str, Any], user_id: int = 1
) -> tuple[str, bool]:
    registry = registry_of(tasks)
    try:
        tool, parsed = registry.parse(name, args)
    except ToolError as error:
        return str(error), True
    result = registry.run(context(tasks, user_id), tool, parsed)
    return result.content, result.is_error


def test_the_api_tools_and_the_prompt_come_from_the_same_registry() -> None:
    specs = REGISTRY.api_tools()
    names = [spec["name"] for spec in specs]
    assert names == [
        "add_task",
        "list_tasks",
        "get_task",
        "update_task",
        "complete_task",
        "delete_task",
        "remember",
        "recall",
        "forget",
    ]
    assert [s.name for s in REGISTRY.summaries()] == names
    add = specs[0]["input_schema"]
    assert add["required"] == ["title"] and add["additionalProperties"] is False
    assert specs[1]["input_schema"]["properties"]["status"]["enum"] == ["all", "pending", "completed"]
    assert {s.name for s in REGISTRY.summaries() if s.needs_approval} == {
        "update_task",
        "delete_task",
        "forget",
    }


def test_a_task_round_trip(tasks: InMemoryTaskRepository) -> None:
    assert call(tasks, "add_task", {"title": " buy milk ", "description": "2 litres"}) == (
        "Added task #1: buy milk",
        False,
    )
    assert call(tasks, "add_task", {"title": "call mom"}) == ("Added task #2: call mom", False)
    assert call(tasks, "complete_task", {"task_id": 1}) == ("Completed task #1: buy milk", False)
    assert call(tasks, "list_tasks", {"status": "pending"}) == ("1 pending task:\n#2 [ ] call mom", False)
    assert call(tasks, "list_tasks", {}) == ("2 tasks:\n#1 [x] buy milk\n#2 [ ] call mom", False)
    details, _ = call(tasks, "get_task", {"task_id": 1})
    assert "Description: 2 litres" in details and "Status: completed" in details
    assert call(tasks, "update_task", {"task_id": 2, "title": "call mum"}) == (
        "Updated task #2: call mum",
        False,
    )
    assert call(tasks, "delete_task", {"task_id": 2}) == ("Deleted task #2: call mum", False)
    assert call(tasks, "list_tasks", {"status": "pending"}) == ("No pending tasks.", False)


def test_task_ids_are_short_and_per_user(tasks: InMemoryTaskRepository) -> None:
    call(tasks, "add_task", {"title": "mine"}, user_id=1)
    assert call(tasks, "add_task", {"title": "theirs"}, user_id=2) == ("Added task #1: theirs", False)


def test_another_users_tasks_are_out_of_reach_whatever_the_arguments(tasks: InMemoryTaskRepository) -> None:
    call(tasks, "add_task", {"title": "secret plans"}, user_id=2)
    assert call(tasks, "get_task", {"task_id": 1}, user_id=1) == (
        "There is no task #1 on the user's list.",
        True,
    )
    assert call(tasks, "delete_task", {"task_id": 1}, user_id=1)[1]
    content, is_error = call(tasks, "list_tasks", {"status": "all", "user_id": 2}, user_id=1)
    assert is_error and "user_id" in content
    assert call(tasks, "list_tasks", {}, user_id=2) == ("1 task:\n#1 [ ] secret plans", False)


@pytest.mark.parametrize(
    ("name", "args", "expected"),
    [
        ("add_task", {"title": "x" * (MAX_TITLE + 1)}, "at most 200 characters"),
        ("add_task", {"title": "   "}, "title"),
        ("add_task", {}, "title: Field required"),
        ("get_task", {"task_id": "three"}, "task_id"),
        ("get_task", {"task_id": 0}, "there is no task #0: task numbers run from 1 to 2147483647"),
        ("get_task", {"task_id": 10**40}, f"there is no task #{10**40}"),
        ("delete_task", {"task_id": 2**31}, "there is no task #2147483648"),
        ("complete_task", {"task_id": -(10**40)}, "there is no task #-1000"),
        ("complete_task", {"task_id": True}, "task_id: Input should be a valid integer"),
        ("complete_task", {"task_id": "3"}, "task_id: Input should be a valid integer"),
        ("complete_task", {"task_id": 3.0}, "task_id: Input should be a valid integer"),
        ("update_task", {"task_id": 10**40, "title": "x"}, "there is no task #1000"),
        ("update_task", {"task_id": 1}, "give a new title"),
        ("list_tasks", {"status": "urgent"}, "status"),
        ("launch_rocket", {}, "Unknown tool 'launch_rocket'"),
    ],
)
def test_bad_calls_become_error_results_the_model_can_explain(
    tasks: InMemoryTaskRepository, name: str, args: dict[str, Any], expected: str
) -> None:
    content, is_error = call(tasks, name, args)
    assert is_error and expected in content


def test_the_model_sees_the_range_of_task_numbers() -> None:
    for spec in REGISTRY.api_tools():
        task_id = spec["input_schema"]["properties"].get("task_id")
        if task_id is not None:
            assert (task_id["type"], task_id["minimum"], task_id["maximum"]) == ("integer", 1, MAX_TASK_ID)
    assert MAX_TASK_ID == 2**31 - 1


def test_a_tool_that_raises_becomes_an_error_result(tasks: InMemoryTaskRepository) -> None:
    def explode(context: ToolContext, args: TaskIdInput) -> str:
        raise RuntimeError("disk on fire")

    registry = ToolRegistry([Tool("explode", "Fails.", TaskIdInput, explode)])
    tool, args = registry.parse("explode", {"task_id": 1})
    result = registry.run(context(tasks), tool, args)
    assert result.is_error and "failed unexpectedly" in result.content and "disk" not in result.content


def test_approval_descriptions_say_exactly_what_will_happen(tasks: InMemoryTaskRepository) -> None:
    call(tasks, "add_task", {"title": "buy milk"})
    registry = registry_of(tasks)
    delete, args = registry.parse("delete_task", {"task_id": 1})
    assert registry.describe(context(tasks), delete, args, call_room(1)) == "Delete task #1 “buy milk”."
    update, args = registry.parse("update_task", {"task_id": 1, "title": "buy oat milk", "description": ""})
    assert registry.describe(context(tasks), update, args, call_room(1)) == (
        "Change task #1 “buy milk”: rename it to “buy oat milk” and clear its description."
    )
    missing, args = registry.parse("delete_task", {"task_id": 9})
    with pytest.raises(ToolError, match="no task #9"):
        registry.describe(context(tasks), missing, args, call_room(1))


def test_tool_results_are_bounded() -> None:
    from stepwise.tools.registry import MAX_RESULT_CHARS, ToolResult

    block = ToolResult(content="x" * (MAX_RESULT_CHARS * 3)).block("toolu_1")
    assert len(block["content"]) <= MAX_RESULT_CHARS + 1
    assert block == block | {"type": "tool_result", "tool_use_id": "toolu_1", "is_error": False}


def test_memory_tools_are_offered_only_where_long_term_memory_is_deployed() -> None:
    names = [spec["name"] for spec in catalog(memory=False).api_tools()]
    assert "add_task" in names and not {"remember", "recall", "forget"} & set(names)


def test_tools_that_write_need_the_ledger(tasks: InMemoryTaskRepository) -> None:
    with pytest.raises(ValueError, match="ledger"):
        ToolRegistry(task_tools(tasks))


def test_duplicate_tool_names_are_refused() -> None:
    tool = REGISTRY.get("add_task")
    assert tool is not None
    with pytest.raises(ValueError, match="duplicate"):
        ToolRegistry([tool, tool])


def test_tasks_may_have_a_due_time_that_lists_show(tasks: InMemoryTaskRepository) -> None:
    assert call(tasks, "add_task", {"title": "pay rent", "due": "2026-12-01T09:00"}) == (
        "Added task #1: pay rent (due 2026-12-01 09:00)",
        False,
    )
    assert call(tasks, "list_tasks", {}) == ("1 task:\n#1 [ ] pay rent (due 2026-12-01 09:00)", False)
    assert "Due: 2026-12-01 09:00" in call(tasks, "get_task", {"task_id": 1})[0]
    registry = registry_of(tasks)
    update, args = registry.parse("update_task", {"task_id": 1, "due": ""})
    assert (
        registry.describe(context(tasks), update, args, call_room(1))
        == "Change task #1 “pay rent”: remove its due time."
    )
    assert not registry.run(context(tasks), update, args).is_error
    assert tasks.get(1, 1) is not None and tasks.get(1, 1).due is None  # type: ignore[union-attr]


@pytest.mark.parametrize("due", ["2026-02-30", "tomorrow", "2026-12-01 9am", "2026-12-01T25:00"])
def test_a_due_time_must_be_a_real_date(tasks: InMemoryTaskRepository, due: str) -> None:
    content, is_error = call(tasks, "add_task", {"title": "x", "due": due})
    assert is_error and "due" in content and tasks.list(1, "all") == []


INVISIBLE_TITLES = {
    "zero-width space": "\u200b",
    "zero-width non-joiner and joiner": "\u200c\u200d",
    "word joiner between spaces": " \u2060 ",
    "byte order mark": "\ufeff",
    "soft hyphen and a no-break space": "\u00ad\u00a0",
    "many format characters": "\u200b\u200e\u200f\u2061\u2062\u2063\u2064" * 3,
}


@pytest.mark.parametrize("title", INVISIBLE_TITLES.values(), ids=INVISIBLE_TITLES.keys())
def test_a_title_of_only_invisible_characters_is_refused_on_add_and_rename(
    tasks: InMemoryTaskRepository, title: str
) -> None:
    content, is_error = call(tasks, "add_task", {"title": title})
    assert is_error and "title is blank" in content, content
    assert tasks.list(1, "all") == []
    call(tasks, "add_task", {"title": "buy milk"})
    content, is_error = call(tasks, "update_task", {"task_id": 1, "title": title})
    assert is_error and "title is blank" in content, content
    assert [t.title for t in tasks.list(1, "all")] == ["buy milk"]


def test_a_title_with_invisible_characters_and_visible_text_is_kept_as_given(
    tasks: InMemoryTaskRepository,
) -> None:
    family = "\U0001f468\u200d\U0001f469\u200d\U0001f467 picnic"  # an emoji joined by U+200D
    assert call(tasks, "add_task", {"title": family}) == (f"Added task #1: {family}", False)
    assert call(tasks, "update_task", {"task_id": 1, "title": "\u200bpicnic"})[1] is False
