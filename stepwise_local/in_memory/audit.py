"""An in-memory AuditLog for unit tests."""

from __future__ import annotations

from stepwise.audit.log import AuditEntry


class InMemoryAuditLog:
    """Entries in a list; the same call recorded again replaces its entry (as the DynamoDB key does)."""

    def __init__(self) -> None:
        self.items: list[AuditEntry] = []

    def record(self, entry: AuditEntry) -> None:
        key = (entry.created_at, entry.tool_use_id)
        self.items = [e for e in self.items if (e.created_at, e.tool_use_id) != key]
        self.items.append(entry)

    def entries(self, user_id: int) -> list[AuditEntry]:
        return [e for e in self.items if e.user_id == user_id]
