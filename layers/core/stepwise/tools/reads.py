"""What a turn reads of the tools' data outside a tool call: the user's profile (their time zone, for the
prompt's clock line, and which OAuth servers their accounts are marked at) and the memories nearest to the
user's message (for the prompt).

The data the tools own (tasks, reminders, memories, the time zone) is touched only by the tool layer and the
composition root, which builds its stores (tests/contract/test_dependencies.py checks the imports). So the
states get these read-only views, built on those stores by the composition root, never the stores themselves.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable

    from stepwise.memory.service import MemoryService
    from stepwise.memory.vector_index import VectorMatch
    from stepwise.reminders.store import Profile, ReminderStore


@dataclass(frozen=True)
class Profiles:
    """Each user's profile: the time zone they chose with the set_timezone tool, and their account marks."""

    reminders: ReminderStore

    def timezone(self, user_id: int) -> str | None:
        """The user's IANA zone, or None until they set one."""
        return self.reminders.timezone(user_id)

    def profile(self, user_id: int) -> Profile:
        """The user's time zone and account marks, in one read (a turn's start)."""
        return self.reminders.profile(user_id)


@dataclass(frozen=True)
class MemoryRecall:
    """The user's long-term memories, read as the recall tool reads them. The service is built on first use
    (its Bedrock and S3 Vectors clients: only LoadContext recalls)."""

    memory: MemoryService | Callable[[], MemoryService]

    def recall(self, user_id: int, query: str, top_k: int) -> list[VectorMatch]:
        """The user's memories nearest to the query, nearest first."""
        memory = self.memory if not callable(self.memory) else self.memory()
        return memory.recall(user_id, query, top_k)
