"""An in-memory ToolCallLedger for unit tests (the in-memory stores write their `done` records into it)."""

from __future__ import annotations

from stepwise.ledger.models import ToolCallRecord


class InMemoryToolCallLedger:
    """Records in a dict keyed by call id."""

    def __init__(self) -> None:
        self.records: dict[str, ToolCallRecord] = {}

    def get(self, call_id: str) -> ToolCallRecord | None:
        return self.records.get(call_id)

    def record_intent(self, call_id: str, result: str, ref: str = "") -> ToolCallRecord:
        record = ToolCallRecord(call_id=call_id, result=result, kind="intent", ref=ref)
        return self.records.setdefault(call_id, record)

    def complete(self, call_id: str, result: str, is_error: bool = False) -> None:
        self.records[call_id] = ToolCallRecord(call_id=call_id, result=result, kind="done", is_error=is_error)

    def add(self, record: ToolCallRecord) -> bool:
        """Add a record unless the call has one; False when it had (as the conditional put in DynamoDB)."""
        if record.call_id in self.records:
            return False
        self.records[record.call_id] = record
        return True
