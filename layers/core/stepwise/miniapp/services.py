"""What the Mini App reads and changes, handed in by the composition root. The tools' data (tasks, reminders,
memories, the time zone) is reached through the tool registry only, as the commands reach it; the rest
through the stores' ports."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable
    from datetime import datetime

    from stepwise.accounts.access import AccountsAccess
    from stepwise.approvals.lifecycle import PressServices
    from stepwise.approvals.store import ApprovalStore
    from stepwise.audit.log import AuditLog
    from stepwise.chats.store import ChatStore
    from stepwise.connections.store import ConnectionStore
    from stepwise.jobs.store import JobStore
    from stepwise.miniapp.gate import AppLimits, RateCounter
    from stepwise.secretary.suggestions import SuggestionStore
    from stepwise.tools.registry import ToolRegistry
    from stepwise.usage.store import UsageStore


@dataclass(eq=False, repr=False)
class AppServices:
    """The Mini App's ports and settings. `timezone(user_id)` is the zone the user set (None until then);
    `voice_replies` says whether spoken replies are deployed at all."""

    bot_token: Callable[[], str]
    count: RateCounter
    limits: AppLimits
    tools: Callable[[], ToolRegistry]
    audit: AuditLog
    approvals: ApprovalStore
    presses: Callable[[], PressServices]
    chats: ChatStore
    connections: ConnectionStore | None
    jobs: JobStore | None
    usage: UsageStore | None
    timezone: Callable[[int], str | None]
    default_timezone: str
    voice_replies: bool
    daily_token_budget: int
    approval_timeout_seconds: int
    clock: Callable[[], datetime]
    accounts: AccountsAccess | None = None  # people's own accounts at OAuth servers, where deployed
    suggestions: SuggestionStore | None = None  # secretary mode's suggested replies, where deployed
    secretary_wait_seconds: int = 24 * 3600  # how long a suggested reply waits
