"""Requests for the offline model as a turn builds them: the task tools and the reminder tools, and the newest
user message followed by the per-turn context with the user's local clock."""

from __future__ import annotations

from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

from stepwise.memory.service import MemoryService
from stepwise.model.types import ModelRequest
from stepwise.prompt.system import turn_context
from stepwise.tools.catalog import build_registry
from stepwise.tools.reminder_tools import ReminderLimits, ReminderSetup
from stepwise_local.in_memory.embedder import LocalHashEmbedder
from stepwise_local.in_memory.reminders import InMemoryReminderStore, InMemorySchedules
from stepwise_local.in_memory.tasks import InMemoryTaskRepository
from stepwise_local.in_memory.vector_index import InMemoryVectorIndex

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
