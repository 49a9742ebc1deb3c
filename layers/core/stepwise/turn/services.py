"""What the turn logic needs from the outside world, gathered in one object (the ports)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

from stepwise.history.repository import MessageRepository
from stepwise.ids import new_id, utc_now
from stepwise.model.types import ChatModel
from stepwise.prompt.system import ToolSummary
from stepwise.telegram.client import TelegramClient
from stepwise.turns.store import TurnStore


@dataclass
class TurnServices:
    """Ports and per-deployment values used by the states.

    `telegram` and `model` are factories: an adapter (and its secret) is only built by a state that uses it.
    """

    messages: MessageRepository
    turns: TurnStore
    telegram: Callable[[], TelegramClient]
    model: Callable[[], ChatModel]
    model_name: str
    max_tokens: int = 2048
    history_limit: int = 20
    tools: list[ToolSummary] = field(default_factory=list)
    clock: Callable[[], datetime] = utc_now
    new_id: Callable[[], str] = new_id
