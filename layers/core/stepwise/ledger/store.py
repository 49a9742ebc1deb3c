"""The port for the tool-call ledger."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from stepwise.ledger.models import ToolCallRecord


class ToolCallLedger(Protocol):
    """Records keyed by call id. Implementations: DynamoDB (with TTL), and in memory for tests.

    Records of kind `done` are written by the stores themselves, atomically with the effect (see `Once`).
    """

    def get(self, call_id: str) -> ToolCallRecord | None:
        """The call's record (strongly consistent), or None when the call made no effect yet."""
        ...

    def record_intent(self, call_id: str, result: str, ref: str = "") -> ToolCallRecord:
        """Record an intent (its result text and the id of what it is about) unless the call has a record
        already; returns the record in force."""
        ...

    def complete(self, call_id: str, result: str, is_error: bool = False) -> None:
        """Record that the call ran and what it answered (replacing its intent): a retry returns this."""
        ...
