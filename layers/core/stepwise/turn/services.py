"""What the turn logic needs from the outside world, gathered in one object (the ports)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from stepwise.approvals.store import ApprovalStore
from stepwise.audit.log import AuditLog
from stepwise.chats.store import ChatStore
from stepwise.history.repository import MessageRepository
from stepwise.ids import new_id, utc_now
from stepwise.memory.service import MemoryService
from stepwise.model.offline import OfflineModel
from stepwise.model.types import ChatModel
from stepwise.tasks.repository import TaskRepository
from stepwise.telegram.client import TelegramClient
from stepwise.tools.registry import ToolRegistry
from stepwise.turns.store import TurnStore


@dataclass
class TurnServices:
    """Ports and per-deployment values used by the states.

    `telegram`, `model` and `rules_model` are factories: an adapter (and its secret) is only built by a state
    that uses it.
    """

    messages: MessageRepository
    turns: TurnStore
    tasks: TaskRepository
    audit: AuditLog
    approvals: ApprovalStore
    chats: ChatStore
    telegram: Callable[[], TelegramClient]
    model: Callable[[], ChatModel]
    model_name: str
    tools: ToolRegistry
    max_tokens: int = 2048
    history_limit: int = 20
    max_tool_steps: int = 5
    approval_timeout_seconds: int = 3600
    fallback_model: Literal["rules", "off"] = "rules"
    memory: MemoryService | None = None
    memory_top_k: int = 3
    summary_threshold: int = 20
    rules_model: Callable[[], ChatModel] = OfflineModel
    clock: Callable[[], datetime] = utc_now
    new_id: Callable[[], str] = new_id

    @property
    def summary_due_at(self) -> int:
        """Unsummarized messages that make a chat due: the recent window plus the threshold."""
        return self.history_limit + self.summary_threshold
