"""Requests for the offline model as a turn builds them: the task tools and the reminder tools, and the newest
user message followed by the per-turn context with the user's local clock."""

from __future__ import annotations

from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

from stepwise.memory.service import MemoryService
from stepwise.model.types import ModelRequest, ModelResponse
from stepwise.offline.api import OfflineModel
from stepwise.prompt.system import turn_context
from stepwise.telegram.conversation import Conversation, Scope
from stepwise.tools.catalog import build_registry
from stepwise.tools.registry import ToolContext
from stepwise.tools.reminder_tools import ReminderLimits, ReminderSetup
from stepwise_local.in_memory.embedder import LocalHashEmbedder
from stepwise_local.in_memory.reminders import InMemoryReminderStore, InMemorySchedules
from stepwise_local.in_memory.tasks import InMemoryTaskRepository
from stepwise_local.in_memory.vector_index import InMemoryVectorIndex

USER = 42
REMINDER_TOOLS = ("set_reminder", "list_reminders", "cancel_reminder", "set_timezone")
# Monday 2026-11-23, 14:05 in Lisbon (UTC+0 in November).
LISBON_NOW = datetime(2026, 11, 23, 14, 5, tzinfo=ZoneInfo("Europe/Lisbon"))


def catalog_tools(reminders: bool = True) -> list[dict[str, Any]]:
    """The API tools of the whole catalog, with or without the reminder tools (on in-memory stores)."""
    tasks = InMemoryTaskRepository()
    memory = MemoryService(LocalHashEmbedder(), InMemoryVectorIndex())
    setup = None
    if reminders:
        setup = ReminderSetup(InMemoryReminderStore(), InMemorySchedules(), ReminderLimits())
    return build_registry(tasks=tasks, ledger=tasks.ledger, memory=memory, reminders=setup).api_tools()


def all_tools() -> list[dict[str, Any]]:
    """The catalog's tools, the reminder tools included."""
    tools = catalog_tools()
    assert set(REMINDER_TOOLS) <= {tool["name"] for tool in tools}
    return tools


def offline_request(
    text: str,
    now: datetime = LISBON_NOW,
    history: list[dict[str, Any]] | None = None,
    tools: list[dict[str, Any]] | None = None,
) -> ModelRequest:
    """A request whose newest user message is `text`, with `now` (aware, in the user's zone) in its
    context."""
    newest = {
        "role": "user",
        "content": [{"type": "text", "text": text}, {"type": "text", "text": turn_context(now)}],
    }
    return ModelRequest(
        model="m",
        max_tokens=100,
        system=[],
        messages=[*(history or []), newest],
        tools=all_tools() if tools is None else tools,
    )


def with_results(
    request: ModelRequest, response: ModelResponse, results: list[dict[str, Any]]
) -> ModelRequest:
    """`request` continued with the model's tool calls (`response`) and their `results`, as the turn sends
    the next round."""
    messages = [
        *request.messages,
        {"role": "assistant", "content": response.content},
        {"role": "user", "content": results},
    ]
    return request._replace(messages=messages)


def on_a_list(text: str, titles: list[str]) -> tuple[ModelResponse, ModelResponse | None]:
    """The offline model's first answer to `text` and, when that answer lists the tasks, its second: after
    list_tasks ran on a list of open tasks #1, #2, … titled `titles` (the real tool, in-memory store)."""
    tasks = InMemoryTaskRepository()
    for title in titles:
        tasks.add(USER, title, "", LISBON_NOW.isoformat())
    registry = build_registry(tasks=tasks, ledger=tasks.ledger)
    request = offline_request(text)
    first = OfflineModel().complete(request)
    if [block["name"] for block in first.tool_uses] != ["list_tasks"]:
        return first, None
    (use,) = first.tool_uses
    tool, args = registry.parse("list_tasks", use["input"])
    result = registry.run(
        ToolContext(Scope(Conversation(USER), USER), "turn-1", "call-1", LISBON_NOW.isoformat()), tool, args
    )
    return first, OfflineModel().complete(with_results(request, first, [result.block(use["id"])]))
