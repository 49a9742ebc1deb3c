"""An in-memory AuditLog for unit tests."""

from __future__ import annotations

from stepwise.audit.log import AuditEntry


class InMemoryAuditLog:
    """Entries in a list."""

    def __init__(self) -> None:
        self.items: dict[str, AuditEntry] = {}

    def record(self, entry: AuditEntry) -> None:
        self.items[entry.tool_use_id] = entry

    def entries(self, user_id: int) -> list[AuditEntry]:
        return [e for e in self.items.values() if e.user_id == user_id]
