"""The catalog's MCP metadata, defined once per tool: annotations that agree with approvals and effects, and
structured results for the read tools only (no MCP SDK needed: the registry speaks MCP's JSON itself)."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from stepwise.telegram.conversation import Conversation, Scope
from stepwise.tools.registry import Tool, ToolContext, ToolOutput, ToolRegistry
from stepwise.tools.task_tools import ListTasksInput, TaskList
from stepwise_local.in_memory.tasks import InMemoryTaskRepository

CONTEXT = ToolContext(Scope(Conversation(1), 1), turn_id="t", call_id="t:1", now="2026-11-22T10:00:00.000Z")


def test_mcp_tools_and_the_models_tools_are_one_list(registry: ToolRegistry) -> None:
    api, mcp = registry.api_tools(), registry.mcp_tools()
    assert [(t["name"], t["description"], t["input_schema"]) for t in api] == [
        (t["name"], t["description"], t["inputSchema"]) for t in mcp
    ]
    assert all(
        set(t["annotations"]) == {"readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"}
        for t in mcp
    )


def test_every_tool_that_needs_approval_is_destructive_and_every_read_tool_has_an_output_schema(
    registry: ToolRegistry,
) -> None:
    for spec in registry.mcp_tools():
        tool = registry.get(spec["name"])
        assert tool is not None
        hints = spec["annotations"]
        if tool.needs_approval:
            assert hints["destructiveHint"] and not hints["readOnlyHint"], tool.name
        if tool.writes:
            assert not hints["readOnlyHint"], tool.name
        assert ("outputSchema" in spec) is hints["readOnlyHint"], tool.name


def _list(context: ToolContext, args: ListTasksInput) -> ToolOutput[TaskList]:
    return ToolOutput("No tasks.", TaskList(tasks=[]))


@pytest.mark.parametrize(
    ("flags", "problem"),
    [
        ({"read_only": True, "output_model": TaskList, "writes": True}, "read-only"),
        ({"read_only": True, "output_model": TaskList, "destructive": True}, "read-only"),
        ({"needs_approval": True}, "destructive"),
        ({"read_only": True}, "output_model"),
        ({"output_model": TaskList}, "output_model"),
    ],
)
def test_a_tool_whose_metadata_contradicts_itself_is_refused(flags: dict[str, Any], problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        Tool("t", "a tool", ListTasksInput, _list, **flags)


class Other(BaseModel):
    n: int


@pytest.mark.parametrize(
    ("run", "output_model"),
    [
        (lambda context, args: "text where data was promised", TaskList),
        (lambda context, args: ToolOutput("text", Other(n=1)), TaskList),
        (lambda context, args: ToolOutput("data where text was promised", TaskList(tasks=[])), None),
    ],
)
def test_a_handler_that_breaks_its_result_shape_fails_as_a_tool_error(run: Any, output_model: Any) -> None:
    tool = Tool(
        "t", "a tool", ListTasksInput, run, read_only=output_model is not None, output_model=output_model
    )
    registry = ToolRegistry([tool])
    result = registry.run(CONTEXT, tool, ListTasksInput())
    assert (result.is_error, result.structured) == (True, None)
    assert result.content == "The t tool failed unexpectedly; nothing more is known."


def test_a_read_tools_result_carries_its_data(registry: ToolRegistry, tasks: InMemoryTaskRepository) -> None:
    tasks.add(1, "buy milk", "", CONTEXT.now)
    tool, args = registry.parse("list_tasks", {})
    result = registry.run(CONTEXT, tool, args)
    assert result.structured is not None and [t["title"] for t in result.structured["tasks"]] == ["buy milk"]
    assert "structured" not in result.block("toolu_1"), "the model reads the text"
    tool, args = registry.parse("add_task", {"title": "call mom"})
    assert registry.run(CONTEXT, tool, args).structured is None
