"""What the turn logic needs from the outside world, gathered in one object (the ports)."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Literal

from stepwise.ids import new_id, utc_now
from stepwise.media.intake import MediaLimits

# Types only: a state imports the adapters it uses, not every port's module (cold starts).
if TYPE_CHECKING:
    from collections.abc import Callable
    from datetime import datetime

    from stepwise.approvals.store import ApprovalStore
    from stepwise.audit.log import AuditLog
    from stepwise.chats.store import ChatStore
    from stepwise.connections.store import ConnectionStore
    from stepwise.history.repository import MessageRepository
    from stepwise.inbox.sequencer import Sequencer
    from stepwise.media.fetch import FileSource
    from stepwise.model.types import ChatModel
    from stepwise.telegram.client import TelegramClient
    from stepwise.telegram.drafts import DraftSender
    from stepwise.tools.reads import MemoryRecall, TimeZones
    from stepwise.tools.registry import ToolRegistry
    from stepwise.turn_records.store import TurnStore
    from stepwise.usage.store import UsageStore


def offline_model() -> ChatModel:
    """The offline rules model (imported when a turn falls back to it)."""
    from stepwise.offline.api import OfflineModel

    return OfflineModel()


@dataclass
class TurnServices:
    """Ports and per-deployment values used by the states.

    `telegram`, `model`, `rules_model`, `sequencer` and `tool_catalog` are factories: an adapter (and its
    secret, and its imports) is built only by a state that uses it.

    The states never hold a store of the data the tools own: they reach it through the tools, and LoadContext
    reads the user's time zone (`reminders`) and memories (`memory`) through the tool layer's read-only views
    (`stepwise.tools.reads`).
    """

    messages: MessageRepository
    turns: TurnStore
    audit: AuditLog
    approvals: ApprovalStore
    chats: ChatStore
    reminders: TimeZones
    telegram: Callable[[], TelegramClient]
    model: Callable[[], ChatModel]
    sequencer: Callable[[], Sequencer]
    model_name: str
    tool_catalog: Callable[[], ToolRegistry]
    max_tokens: int = 2048
    history_limit: int = 20
    history_margin: int | None = None  # None: chosen per model (see stepwise.prompt.caching)
    max_tool_steps: int = 5
    approval_timeout_seconds: int = 3600
    fallback_model: Literal["rules", "off"] = "rules"
    memory: MemoryRecall | None = None
    default_timezone: str = "UTC"
    memory_top_k: int = 3
    summary_threshold: int = 20
    persona: str = ""  # the persona section of the system prompt, read once per container
    rules_model: Callable[[], ChatModel] = offline_model
    files: Callable[[], FileSource] | None = None  # photos and documents; None: they show as text
    media_limits: MediaLimits = field(default_factory=MediaLimits)
    drafts: Callable[[], DraftSender] | None = None  # None: no drafts (see stepwise.telegram.drafts)
    draft_interval_seconds: float = 0.0
    usage: UsageStore | None = None  # None: model calls are not counted (and no budget applies)
    daily_token_budget: int = 0
    connections: ConnectionStore | None = None  # the /mcp endpoint's tokens (/connect); None: not deployed
    mcp_url: str = ""
    clock: Callable[[], datetime] = utc_now
    new_id: Callable[[], str] = new_id

    @property
    def summary_due_at(self) -> int:
        """Unsummarized messages that make a chat due: the recent window plus the threshold."""
        return self.history_limit + self.summary_threshold

    @cached_property
    def tools(self) -> ToolRegistry:
        """The tools of a turn, built on first use (only CallModel and RunTools need them)."""
        return self.tool_catalog()
