"""Per-turn records: the context window, each model response, tool results and the reply's delivery."""

from stepwise.turns.models import ModelStep, Reply, ReplySource, TurnMeta
from stepwise.turns.store import TurnStore

__all__ = ["ModelStep", "Reply", "ReplySource", "TurnMeta", "TurnStore"]
