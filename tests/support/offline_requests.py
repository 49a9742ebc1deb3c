"""Requests for the offline model as a turn builds them: the task tools and the reminder tools, and the newest
user message followed by the per-turn context with the user's local clock."""

from __future__ import annotations

from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

from stepwise.model.types import ModelRequest
from stepwise.prompt.system import turn_context
from stepwise.tools.catalog import build_registry

REMINDER_TOOLS = ("set_reminder", "list_reminders", "cancel_reminder", "set_timezone")
# Monday 2026-11-23, 14:05 in Lisbon (UTC+0 in November).
LISBON_NOW = datetime(2026, 11, 23, 14, 5, tzinfo=ZoneInfo("Europe/Lisbon"))


def all_tools() -> list[dict[str, Any]]:
    """The catalog's tools plus stand-ins for the reminder tools (only their names matter offline)."""
    stand_ins = [
        {"name": name, "description": name, "input_schema": {"type": "object"}} for name in REMINDER_TOOLS
    ]
    known = build_registry().api_tools()
    return known + [tool for tool in stand_ins if tool["name"] not in {t["name"] for t in known}]


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
