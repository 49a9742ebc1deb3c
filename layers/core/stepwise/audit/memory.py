"""An in-memory AuditLog for unit tests."""

from __future__ import annotations

from stepwise.audit.log import AuditEntry


class InMemoryAuditLog:
    """Entries appended to a list."""

    def __init__(self) -> None:
        self.items: list[AuditEntry] = []

    def record(self, entry: AuditEntry) -> None:
        self.items.append(entry)

    def entries(self, user_id: int) -> list[AuditEntry]:
        return [e for e in self.items if e.user_id == user_id]
