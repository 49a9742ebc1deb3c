"""Everything the page shows, for the user who opened it, in one answer: open tasks, reminders and check-ins,
memories, background jobs, MCP clients, pending approvals, the settings, and usage per day for 30 days.

The tools' data is read through the read tools of the registry (as /tasks, /reminders and /memory read it);
the usage totals are the counters /usage reads, so the chart, its totals and /usage agree.
"""

from __future__ import annotations

import logging
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from stepwise.approvals.wording import asks
from stepwise.telegram.conversation import Conversation
from stepwise.tools.registry import ToolContext
from stepwise.turn.ids import iso_utc
from stepwise.usage.models import UsageTotals, day_key, month_key

if TYPE_CHECKING:
    from datetime import datetime

    from stepwise.miniapp.init_data import WebAppUser
    from stepwise.miniapp.services import AppServices

logger = logging.getLogger(__name__)

USAGE_DAYS = 30
MEMORY_QUERY = "what I know about the user"  # any text: the query is only a way to list the memories
MEMORY_LIMIT = 50
JOBS_LIMIT = 10


def snapshot(user: WebAppUser, services: AppServices) -> dict[str, Any]:
    """The page's data for `user` (in a private chat, the chat's id is the user's)."""
    now = services.clock()
    context = ToolContext(
        user_id=user.user_id, chat_id=user.user_id, turn_id="app", call_id="app:read", now=iso_utc(now)
    )
    zone = services.timezone(user.user_id)
    chat = services.chats.get(Conversation.of(user.user_id))  # the private chat itself (its voice setting)
    return {
        "user": {"id": user.user_id, "first_name": user.first_name},
        "settings": {
            "timezone": zone or services.default_timezone,
            "timezone_set": zone is not None,
            "voice_replies": bool(chat is not None and chat.voice_replies),
            "voice_available": services.voice_replies,
        },
        "tasks": _read(services, context, "list_tasks", {"status": "pending"}, "tasks"),
        "reminders": _read(services, context, "list_reminders", {}, "reminders"),
        "memories": _read(
            services, context, "recall", {"query": MEMORY_QUERY, "limit": MEMORY_LIMIT}, "memories"
        ),
        "jobs": _jobs(user.user_id, services),
        "connections": _connections(user.user_id, services),
        "approvals": _approvals(user.user_id, services, now),
        "usage": usage_days(user.user_id, services, now),
    }


def _read(
    services: AppServices, context: ToolContext, tool: str, arguments: dict[str, Any], key: str
) -> list[dict[str, Any]] | None:
    """A read tool's structured list; None when the tool is not deployed or failed (the page says so)."""
    registry = services.tools()
    found = registry.get(tool)
    if found is None:
        return None
    parsed_tool, args = registry.parse(tool, arguments)
    result = registry.run(context, parsed_tool, args)
    if result.is_error or result.structured is None:
        logger.warning("a read for the Mini App failed", extra={"tool": tool, "error": result.content})
        return None
    items: list[dict[str, Any]] = result.structured[key]
    return items


def _jobs(user_id: int, services: AppServices) -> list[dict[str, Any]] | None:
    if services.jobs is None:
        return None
    return [
        {
            "number": job.number,
            "title": job.title,
            "status": job.status,
            "created_at": job.created_at,
            "finished_at": job.finished_at,
            "tokens": job.tokens,
        }
        for job in services.jobs.recent(user_id, JOBS_LIMIT)
    ]


def _connections(user_id: int, services: AppServices) -> list[dict[str, Any]] | None:
    if services.connections is None:
        return None
    return [
        {"name": c.name, "created_at": c.created_at, "pending": c.pending}
        for c in services.connections.list(user_id)
    ]


def _approvals(user_id: int, services: AppServices, now: datetime) -> list[dict[str, Any]]:
    """The user's requests still waiting for Approve or Deny (shown in the chat, with a turn waiting)."""
    since = iso_utc(now - timedelta(seconds=services.approval_timeout_seconds))
    return [
        {
            "approval_id": request.approval_id,
            "asks": asks(request.requester, [call.description for call in request.calls]),
            "requester": request.requester.kind,
            "created_at": request.created_at,
        }
        for request in services.approvals.pending(user_id, since)
        if request.task_token is not None
    ]


def usage_days(user_id: int, services: AppServices, now: datetime) -> dict[str, Any] | None:
    """Tokens and estimated cost per UTC day for the last 30 days (oldest first), their total, and today's
    and this month's totals as /usage counts them."""
    if services.usage is None:
        return None
    store = services.usage
    keys = [day_key(now - timedelta(days=back)) for back in range(USAGE_DAYS - 1, -1, -1)]
    counted = store.days(user_id, keys[0], keys[-1])
    days = []
    total = UsageTotals()
    for key in keys:
        day = counted.get(key, UsageTotals())
        total = total.plus(day)
        days.append({"day": key.removeprefix("day#"), **_amounts(day)})
    return {
        "days": days,
        "last_30_days": _amounts(total),
        "today": _amounts(counted.get(keys[-1], UsageTotals())),
        "this_month": _amounts(store.totals(user_id, month_key(now))),
        "daily_token_budget": services.daily_token_budget,
    }


def _amounts(totals: UsageTotals) -> dict[str, Any]:
    return {"tokens": totals.tokens, "cost_usd": round(totals.cost_usd, 6)}
