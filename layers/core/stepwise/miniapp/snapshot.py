"""Everything the page shows, for the user who opened it, in one answer: open tasks, reminders and check-ins,
memories, background jobs, MCP clients, their accounts at OAuth servers, pending approvals, suggested replies
waiting for Send or Skip (secretary mode), the settings, and usage per day for 30 days.

The tools' data is read through the read tools of the registry (as /tasks, /reminders and /memory read it);
the usage totals are the counters /usage reads, so the chart, its totals and /usage agree.

Every moment the page shows is written here in one style, in the user's time zone (their /timezone, else the
deployment's default), as the chat writes moments: "Mon 23 Nov 2026 at 17:00"; a due date without a time is
"Tue 01 Dec 2026". The page shows no internal ids: the ids an action needs travel beside the words it shows.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfo

from stepwise.approvals.wording import asks
from stepwise.reminders.timing import TimingError, describe_moment, parse_instant, zone
from stepwise.telegram.conversation import Conversation, Scope
from stepwise.tools.registry import ToolContext
from stepwise.turn.ids import iso_utc
from stepwise.usage.models import UsageTotals, day_key, month_key

if TYPE_CHECKING:
    from stepwise.approvals.models import ApprovalRequest
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
    private = Scope(Conversation(user.user_id), user.user_id)
    context = ToolContext(private, turn_id="app", call_id="app:read", now=iso_utc(now))
    chosen = services.timezone(user.user_id)
    name = chosen or services.default_timezone
    tz = _zone(name)
    chat = services.chats.get(private.conversation)  # the private chat itself (its voice setting)
    tasks = _read(services, context, "list_tasks", {"status": "pending"}, "tasks")
    reminders = _read(services, context, "list_reminders", {}, "reminders")
    memories = _read(services, context, "recall", {"query": MEMORY_QUERY, "limit": MEMORY_LIMIT}, "memories")
    approvals = _approvals(user.user_id, services, now, tz)
    return {
        "user": {"id": user.user_id, "first_name": user.first_name},
        "settings": {
            "timezone": name,
            "timezone_set": chosen is not None,
            "voice_replies": bool(chat is not None and chat.voice_replies),
            "voice_available": services.voice_replies,
        },
        "tasks": None if tasks is None else [{**t, "due_text": _due(t.get("due"))} for t in tasks],
        "reminders": None
        if reminders is None
        else [{**r, "next_text": moment(r.get("next_at"), tz)} for r in reminders],
        "memories": None
        if memories is None
        else [{**m, "kind": "summary" if str(m["id"]).startswith("summary-") else "fact"} for m in memories],
        "jobs": _jobs(user.user_id, services, tz),
        "connections": _connections(user.user_id, services, tz),
        "accounts": _accounts(user.user_id, services, tz),
        "approvals": [
            {key: value for key, value in a.items() if key != "chat_id"}
            for a in approvals
            if a["requester"] != "secretary"
        ],
        "suggestions": _suggestions(user.user_id, approvals, services) if services.suggestions else None,
        "usage": usage_days(user.user_id, services, now),
    }


def _zone(name: str) -> ZoneInfo:
    try:
        return zone(name)
    except TimingError:  # a zone this runtime does not know (stored by an older one): UTC, not a failed page
        logger.warning("an unknown time zone; the page shows UTC", extra={"timezone": name})
        return ZoneInfo("UTC")


def moment(iso: str | None, tz: ZoneInfo) -> str | None:
    """An ISO 8601 moment (UTC `…Z`, or with an offset) in `tz`, as the page writes every moment: "Mon 23 Nov
    2026 at 17:00"; None for None or what is not a moment."""
    parsed = parse_instant(iso) if iso else None
    return describe_moment(parsed.astimezone(tz)) if parsed is not None else None


def _due(due: str | None) -> str | None:
    """A task's due date or date-time, already the user's local one: "Tue 01 Dec 2026" (at 09:00)."""
    if not due:
        return None
    try:
        parsed = datetime.fromisoformat(due)
    except ValueError:
        return due
    return describe_moment(parsed) if "T" in due else parsed.strftime("%a %d %b %Y")


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


def _jobs(user_id: int, services: AppServices, tz: ZoneInfo) -> list[dict[str, Any]] | None:
    if services.jobs is None:
        return None
    return [
        {
            "number": job.number,
            "title": job.title,
            "status": job.status,
            "started": moment(job.created_at, tz),
            "finished": moment(job.finished_at, tz),
            "tokens": job.tokens,
        }
        for job in services.jobs.recent(user_id, JOBS_LIMIT)
    ]


def _connections(user_id: int, services: AppServices, tz: ZoneInfo) -> list[dict[str, Any]] | None:
    if services.connections is None:
        return None
    return [
        {"name": c.name, "made": moment(c.created_at, tz), "pending": c.pending}
        for c in services.connections.list(user_id)
    ]


def _accounts(user_id: int, services: AppServices, tz: ZoneInfo) -> list[dict[str, Any]] | None:
    """Each OAuth server of the servers list, connected (since when) or not; None where accounts are not
    deployed. The Connect button's sign-in is made when it is tapped (an action), not here."""
    if services.accounts is None:
        return None
    servers = services.accounts.servers()
    if not servers:
        return []
    kept = {account.server: account for account in services.accounts.store().list(user_id)}
    return [
        {
            "name": entry.name,
            "connected": entry.name in kept,
            "since": moment(kept[entry.name].connected_at, tz) if entry.name in kept else None,
        }
        for entry in servers
    ]


def _approvals(user_id: int, services: AppServices, now: datetime, tz: ZoneInfo) -> list[dict[str, Any]]:
    """The user's requests still waiting for Approve or Deny (shown in the chat, with a turn waiting). Each
    says which chat it waits in: a group's by its title, as the group's chat record keeps it."""
    longest = max(
        services.approval_timeout_seconds, services.secretary_wait_seconds if services.suggestions else 0
    )
    since = iso_utc(now - timedelta(seconds=longest))
    titles: dict[Conversation, str] = {}
    shown = []
    for request in services.approvals.pending(user_id, since):
        if request.task_token is None:
            continue
        in_group = request.conversation.in_group
        group = _group_title(request, services, titles) if in_group else None
        where = f"the group “{group}”" if group else "a group" if in_group else "your private chat"
        kind = request.requester.kind
        shown.append(
            {
                "approval_id": request.approval_id,
                "asks": asks(request.requester, [c.description for c in request.calls], chat_name=where),
                "group": group,
                "where": None if kind == "chat" else f"in {where}",  # the sentence names it already
                "requester": kind,
                "asked": moment(request.created_at, tz),
                "chat_id": request.chat_id,
            }
        )
    return shown


def _suggestions(owner: int, approvals: list[dict[str, Any]], services: AppServices) -> list[dict[str, Any]]:
    """The suggested replies waiting for the owner's Send or Skip (secretary mode), as kept: the owner's edit
    if any; one replaced by a newer draft of the same chat is not shown."""
    assert services.suggestions is not None
    shown = []
    for approval in approvals:
        if approval["requester"] != "secretary":
            continue
        kept = services.suggestions.get(owner, approval["chat_id"])
        if kept is None or kept.approval_id != approval["approval_id"] or kept.status != "pending":
            continue
        shown.append(
            {
                "approval_id": kept.approval_id,
                "contact": kept.contact or "Someone",
                "wrote": kept.wrote,
                "text": kept.text,
                "asked": approval["asked"],
            }
        )
    return shown


def _group_title(request: ApprovalRequest, services: AppServices, titles: dict[Conversation, str]) -> str:
    """The group's title as its newest message gave it ("" before any did), read once per conversation."""
    conversation = request.conversation
    if conversation not in titles:
        chat = services.chats.get(conversation)
        if (chat is None or not chat.title) and conversation.topic is not None:
            chat = services.chats.get(conversation.main)
        titles[conversation] = chat.title if chat is not None else ""
    return titles[conversation]


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
