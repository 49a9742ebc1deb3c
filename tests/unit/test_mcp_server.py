"""The MCP server of the built-in tools, through the official SDK's client connected in process: the catalog
it lists is the model's, calls act for the bound user only and go the model's way (parsing, the ledger, the
audit log), and tools that need approval are refused."""

from __future__ import annotations

import itertools
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.types import CallToolResult, TextContent

from stepwise.mcp.server import build_mcp_server
from stepwise.memory.service import MemoryService
from stepwise.telegram.conversation import Conversation, Scope
from stepwise.tools.calls import NEEDS_APPROVAL
from stepwise.tools.registry import ToolContext, ToolRegistry
from stepwise_local.in_memory.audit import InMemoryAuditLog
from stepwise_local.in_memory.tasks import InMemoryTaskRepository

USER = 7
OTHER = 8
NOW = "2026-11-22T10:00:00.000Z"
# The SDK's in-process client: "legacy" runs the initialize handshake over the in-memory transport (JSON-RPC
# on memory streams), "auto" the 2026-07-28 protocol's direct dispatch.
MODES = ["legacy", "auto"]
READ_ONLY = {"list_tasks", "get_task", "recall", "list_reminders"}
DESTRUCTIVE = {"update_task", "delete_task", "forget", "cancel_reminder"}
IDEMPOTENT = READ_ONLY | DESTRUCTIVE | {"complete_task", "set_timezone"}
_call_ids = itertools.count(1)


@pytest.fixture
def audit() -> InMemoryAuditLog:
    return InMemoryAuditLog()


def calls_for(user_id: int, call_ids: Callable[[], str] | None = None) -> Callable[[], ToolContext]:
    """The caller's side: every call acts for `user_id`, each with a new call id unless `call_ids` says."""
    return lambda: ToolContext(
        Scope(Conversation(user_id), user_id),
        turn_id="mcp",
        call_id=call_ids() if call_ids else f"mcp:{next(_call_ids)}",
        now=NOW,
    )


def serve[T](
    registry: ToolRegistry,
    audit: InMemoryAuditLog,
    session: Callable[[Client], Awaitable[T]],
    mode: str = "legacy",
    context_for_call: Callable[[], ToolContext] | None = None,
) -> T:
    """Run `session` with a client connected in process to the server of `registry` for USER."""
    server = build_mcp_server(registry, context_for_call or calls_for(USER), audit)

    async def connected() -> T:
        async with Client(server, mode=mode) as client:
            return await session(client)

    return anyio.run(connected)


def call(
    registry: ToolRegistry,
    audit: InMemoryAuditLog,
    name: str,
    arguments: dict[str, Any],
    mode: str = "legacy",
) -> CallToolResult:
    async def session(client: Client) -> CallToolResult:
        return await client.call_tool(name, arguments)

    return serve(registry, audit, session, mode)


def text(result: CallToolResult) -> str:
    (block,) = result.content
    assert isinstance(block, TextContent)
    return block.text


@pytest.mark.parametrize("mode", MODES)
def test_tools_list_is_the_catalog_the_model_gets(
    registry: ToolRegistry, audit: InMemoryAuditLog, mode: str
) -> None:
    async def session(client: Client) -> list[dict[str, Any]]:
        return [
            {"name": t.name, "description": t.description, "input_schema": t.input_schema}
            for t in (await client.list_tools()).tools
        ]

    assert serve(registry, audit, session, mode) == registry.api_tools()


def test_tools_list_says_which_tools_read_destroy_or_repeat_safely(
    registry: ToolRegistry, audit: InMemoryAuditLog
) -> None:
    async def session(client: Client) -> list[Any]:
        return (await client.list_tools()).tools

    listed = {tool.name: tool for tool in serve(registry, audit, session)}
    assert len(listed) == 13
    for name, tool in listed.items():
        hints = tool.annotations
        assert hints is not None
        assert hints.read_only_hint is (name in READ_ONLY), name
        assert hints.destructive_hint is (name in DESTRUCTIVE), name
        assert hints.idempotent_hint is (name in IDEMPOTENT), name
        assert hints.open_world_hint is False, name
        assert (tool.output_schema is not None) is (name in READ_ONLY), "read tools answer with data"
        if registry.get(name).needs_approval:  # type: ignore[union-attr]
            assert name in DESTRUCTIVE
    assert set(listed["list_tasks"].output_schema["properties"]) == {"tasks"}  # type: ignore[index]


@pytest.mark.parametrize("mode", MODES)
def test_add_task_adds_a_task_for_the_bound_user_and_is_audited(
    registry: ToolRegistry, audit: InMemoryAuditLog, tasks: InMemoryTaskRepository, mode: str
) -> None:
    result = call(registry, audit, "add_task", {"title": "buy milk"}, mode)
    assert (text(result), result.is_error, result.structured_content) == (
        "Added task #1: buy milk",
        False,
        None,
    )
    assert [t.title for t in tasks.list(USER, "all")] == ["buy milk"]
    assert tasks.list(OTHER, "all") == []
    (entry,) = audit.entries(USER)
    assert (entry.tool, entry.arguments, entry.outcome, entry.approval) == (
        "add_task",
        {"title": "buy milk"},
        "ok",
        "not_needed",
    )
    assert (entry.turn_id, entry.tool_use_id[:4], entry.created_at) == ("mcp", "mcp:", NOW)


@pytest.mark.parametrize("mode", MODES)
def test_a_read_tool_returns_its_result_as_structured_content_too(
    registry: ToolRegistry, audit: InMemoryAuditLog, tasks: InMemoryTaskRepository, mode: str
) -> None:
    # The SDK's client checks structured content against the tool's output schema (it raises otherwise).
    tasks.add(USER, "buy milk", "2 litres", NOW, due="2026-11-23")
    tasks.add(USER, "call mom", "", NOW)
    listed = call(registry, audit, "list_tasks", {"status": "all"}, mode)
    assert not listed.is_error
    assert text(listed) == "2 tasks:\n#1 [ ] buy milk (due 2026-11-23)\n#2 [ ] call mom"
    assert listed.structured_content == {
        "tasks": [
            {
                "task_id": 1,
                "title": "buy milk",
                "description": "2 litres",
                "status": "pending",
                "due": "2026-11-23",
                "created_at": NOW,
                "completed_at": None,
            },
            {
                "task_id": 2,
                "title": "call mom",
                "description": "",
                "status": "pending",
                "due": None,
                "created_at": NOW,
                "completed_at": None,
            },
        ]
    }
    one = call(registry, audit, "get_task", {"task_id": 2}, mode)
    assert one.structured_content is not None and one.structured_content["title"] == "call mom"
    none = call(registry, audit, "list_reminders", {}, mode)
    assert (text(none), none.structured_content) == ("No reminders.", {"reminders": []})


def test_arguments_naming_another_user_cannot_reach_their_data(
    registry: ToolRegistry,
    audit: InMemoryAuditLog,
    tasks: InMemoryTaskRepository,
    memory: MemoryService,
) -> None:
    tasks.add(OTHER, "the other user's secret", "", NOW)
    other_memory = memory.remember(OTHER, OTHER, "The other user's PIN is 1234", NOW)

    async def session(client: Client) -> list[CallToolResult]:
        return [
            await client.call_tool("add_task", {"title": "x", "user_id": OTHER}),
            await client.call_tool("list_tasks", {"user_id": OTHER}),
            await client.call_tool("get_task", {"task_id": 1}),
            await client.call_tool("list_tasks", {}),
            await client.call_tool("recall", {"query": "PIN"}),
            await client.call_tool("complete_task", {"task_id": 1}),
            await client.call_tool("forget", {"memory_id": other_memory}),
        ]

    smuggled, listed_other, get_other, listed, recalled, completed, forgotten = serve(
        registry, audit, session
    )
    for result in (smuggled, listed_other):
        assert result.is_error
        assert "user_id: Extra inputs are not permitted" in text(result)
    assert (get_other.is_error, text(get_other)) == (True, "There is no task #1 on the user's list.")
    assert listed.structured_content == {"tasks": []}
    assert recalled.structured_content == {"memories": []}
    assert (completed.is_error, forgotten.is_error) == (True, True)
    (other_task,) = tasks.list(OTHER, "all")
    assert other_task.status == "pending"
    assert memory.get_owned(OTHER, other_memory) is not None
    assert {entry.user_id for entry in audit.items} == {USER}


@pytest.mark.parametrize("mode", MODES)
def test_unknown_tools_and_invalid_arguments_are_error_results_in_the_models_words(
    registry: ToolRegistry, audit: InMemoryAuditLog, mode: str
) -> None:
    unknown = call(registry, audit, "drop_tables", {}, mode)
    assert unknown.is_error
    assert text(unknown).startswith("Unknown tool 'drop_tables'. Available tools: add_task, list_tasks")
    invalid = call(registry, audit, "add_task", {"title": ""}, mode)
    assert invalid.is_error
    assert text(invalid) == "Invalid arguments for add_task: title: String should have at least 1 character"
    not_a_number = call(registry, audit, "get_task", {"task_id": "1"}, mode)
    assert not_a_number.is_error
    assert [e.outcome for e in audit.entries(USER)] == [
        "unknown_tool",
        "invalid_arguments",
        "invalid_arguments",
    ]


@pytest.mark.parametrize("name", ["delete_task", "update_task", "forget"])
def test_a_tool_that_needs_approval_is_refused_and_changes_nothing(
    registry: ToolRegistry, audit: InMemoryAuditLog, tasks: InMemoryTaskRepository, name: str
) -> None:
    tasks.add(USER, "buy milk", "", NOW)
    arguments = {"memory_id": "fact-x"} if name == "forget" else {"task_id": 1, "title": "sell milk"}
    if name == "delete_task":
        arguments = {"task_id": 1}
    refused = call(registry, audit, name, arguments)
    assert (refused.is_error, text(refused)) == (True, NEEDS_APPROVAL.format(tool=name))
    assert [t.title for t in tasks.list(USER, "all")] == ["buy milk"]
    (entry,) = audit.entries(USER)
    assert (entry.outcome, entry.approval) == ("denied", "unavailable")


def test_a_call_id_runs_once_through_the_ledger(
    registry: ToolRegistry, audit: InMemoryAuditLog, tasks: InMemoryTaskRepository
) -> None:
    # A caller that gives two calls the same id (as a retried request would): the ledger answers the second.
    same_id = calls_for(USER, call_ids=lambda: "mcp:request-1")

    async def session(client: Client) -> list[str]:
        return [text(await client.call_tool("add_task", {"title": "buy milk"})) for _ in range(2)]

    assert serve(registry, audit, session, context_for_call=same_id) == ["Added task #1: buy milk"] * 2
    assert len(tasks.list(USER, "all")) == 1
