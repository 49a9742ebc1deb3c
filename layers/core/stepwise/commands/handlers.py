"""What each command answers. Handlers read the user's tasks, reminders and memories through the tools the
model uses (the tool layer is the only code that touches those stores), and the turn's own records (the
chat, usage) through their stores; they never call the model, so a command costs no tokens and answers the
same with or without an Anthropic key."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING

from stepwise.tools.registry import ToolContext
from stepwise.usage.report import usage_report

if TYPE_CHECKING:
    from stepwise.services import TurnServices
    from stepwise.tools.registry import ToolResult
    from stepwise.turn_records.models import TurnMeta

logger = logging.getLogger(__name__)

MEMORY_LIST_LIMIT = 50  # the most memories /memory shows
MEMORY_LINE_CHARS = 300
MEMORY_QUERY = "what I know about the user"  # any text: the query is only a way to list the user's memories
USAGE_NOT_COUNTED = "Usage is not counted in this deployment."
# In a group only what addresses the bot starts a turn: a group's empty list says how to add to it.
MENTION_ME = "mention me (or reply to one of my messages) with it, for example"


@dataclass(frozen=True)
class ShownOnce:
    """An answer that shows a new token once (`/connect <name>`). `text` has `TOKEN_SLOT` where the token
    goes: the token is made only when FinishTurn sends the reply, from `seed`
    (`stepwise.connections.minting`), and is the `connection`'s (of the turn's user) from then on. `kept` is
    what the chat's history stores (what later model calls see)."""

    text: str
    kept: str
    connection: str
    seed: str


@dataclass(frozen=True)
class WithAppButton:
    """An answer sent with one inline button that opens the Mini App at `url` (a `web_app` button: Telegram
    signs the page's initData; a reply keyboard's would send none)."""

    text: str
    button: str
    url: str


@dataclass(frozen=True)
class WithLinks:
    """An answer sent with inline buttons that open web pages (`/accounts`' Connect buttons), one a row under
    its last chunk: `links` are (label, url) pairs; none sends the text alone."""

    text: str
    links: tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class CommandRequest:
    """One command to answer: its arguments, the turn it arrived in, and `reply_key`, the history sort key
    its answer will be stored under (where /reset starts the next window)."""

    args: str
    meta: TurnMeta
    services: TurnServices
    reply_key: str


def _run_tool(request: CommandRequest, name: str, arguments: dict[str, object]) -> ToolResult | None:
    """The result of a read-only tool of the turn's registry, or None when it is not deployed."""
    registry = request.services.tools.registry
    tool = registry.get(name)
    if tool is None:
        return None
    assert tool.read_only, f"a command runs read-only tools only, not {name}"
    tool, args = registry.parse(name, arguments)
    meta = request.meta
    context = ToolContext(
        meta.scope, turn_id=meta.turn_id, call_id=f"{meta.turn_id}:command", now=meta.created_at
    )
    return registry.run(context, tool, args)


def tasks(request: CommandRequest) -> str:
    """The user's tasks (a group's own in a group), through the list_tasks tool."""
    listed = _run_tool(request, "list_tasks", {"status": "all"})
    if listed is None or listed.content.startswith("No "):
        if request.meta.scope.in_group:
            return f"The group has no tasks. To add one, {MENTION_ME} “add bread”."
        return "You have no tasks. Add one by writing, for example, “add buy milk”."
    return listed.content


def reminders(request: CommandRequest) -> str:
    """The user's reminders and check-ins, through the list_reminders tool."""
    listed = _run_tool(request, "list_reminders", {})
    if listed is None:
        return "Reminders are not set up in this deployment."
    if listed.content.startswith("No "):
        if request.meta.scope.in_group:
            return f"The group has no reminders. To set one, {MENTION_ME} “remind us at 5pm to call grandma”."
        return "You have no reminders. Set one by writing, for example, “remind me at 5pm to call mom”."
    return listed.content


def memory(request: CommandRequest) -> str:
    """What long-term memory holds about the user (facts and conversation summaries), with their ids, through
    the recall tool's structured result."""
    recalled = _run_tool(request, "recall", {"query": MEMORY_QUERY, "limit": MEMORY_LIST_LIMIT})
    if recalled is None:
        return "Long-term memory is not deployed here: I remember only our recent messages."
    if recalled.is_error or recalled.structured is None:
        logger.warning("listing memories failed", extra={"error": recalled.content})
        return "I can't reach my long-term memory right now. Try /memory again in a minute."
    found = recalled.structured["memories"]
    group = request.meta.scope.in_group
    if not found:
        if group:
            return (
                f"I don't remember anything for this group yet. To keep something, {MENTION_ME} "
                "“remember that …”."
            )
        return "I don't remember anything about you yet. Ask me to remember something: “remember that …”."
    lines = [_listed(m["id"], m["text"]) for m in sorted(found, key=lambda m: m["id"])]
    whose = "for this group" if group else "about you"
    return f"What I remember {whose} ({len(found)}):\n" + "\n".join(lines)


def _listed(memory_id: str, text: str) -> str:
    """One memory as a list item: a fact on its line; a summary's bullets (or any text of several lines) as
    lines of their own under its id, never run together."""
    parts = [_short(line.strip().removeprefix("- ")) for line in text.splitlines() if line.strip()]
    if len(parts) <= 1:
        return f"- [{memory_id}] {parts[0] if parts else ''}".rstrip()
    return f"- [{memory_id}]\n" + "\n".join(f"  - {part}" for part in parts)


def _short(text: str) -> str:
    one_line = " ".join(text.split())
    return one_line if len(one_line) <= MEMORY_LINE_CHARS else one_line[:MEMORY_LINE_CHARS] + "…"


def skills(request: CommandRequest) -> str:
    """The skills the assistant can use: each one's name and description (the system prompt's list); with
    the offline rules model only, first that skills need Claude or a compatible endpoint."""
    catalog = request.services.prompt.skills
    found = list(catalog.skills.values()) if catalog is not None else []
    if not found:
        return "No skills are installed in this deployment."
    lines = [f"- {skill.name}: {' '.join(skill.description.split())}" for skill in found]
    if request.services.models.rules_only:  # the offline rules model never opens a skill
        return (
            "Skills need Claude or a compatible endpoint (ANTHROPIC_API_KEY, or ANTHROPIC_BASE_URL for a "
            "compatible one): the offline rules model I run on now can't use them. "
            f"Installed ({len(found)}):\n" + "\n".join(lines)
        )
    return (
        f"Skills I can use ({len(found)}); ask in your own words and I open the one that fits:\n"
        + "\n".join(lines)
    )


def reset(request: CommandRequest) -> str:
    """Start the next turn's history window after this answer; nothing is deleted."""
    request.services.stores.chats.set_window(request.meta.conversation, request.reply_key)
    if request.meta.scope.in_group:
        return (
            "Fresh start: from the next message on I no longer see the earlier messages here. Nothing was "
            "deleted; the group's tasks, reminders and memories stay."
        )
    return (
        "Fresh start: from your next message on I no longer see our earlier messages. Nothing was deleted; "
        "your tasks, reminders and memories stay."
    )


def usage(request: CommandRequest) -> str:
    """The user's tokens and estimated cost today and this month (and the daily budget, if one is set)."""
    services = request.services
    if services.stores.usage is None:
        return USAGE_NOT_COUNTED

    meta = request.meta
    return usage_report(
        meta.user_id,
        services.stores.usage,
        services.clock(),
        services.settings.limits.daily_token_budget,
        meta.timezone,
    )


def timezone(request: CommandRequest) -> str:
    """The user's time zone (`/timezone Europe/Lisbon`, with an argument, is answered by the rules model)."""
    meta = request.meta
    if meta.timezone_set:
        return f"Your time zone is {meta.timezone}. Change it with, e.g., /timezone Asia/Tokyo."
    return (
        f"You have not set a time zone, so times are in {meta.timezone}. "
        "Set yours with /timezone followed by a zone, e.g. /timezone Europe/Lisbon."
    )
