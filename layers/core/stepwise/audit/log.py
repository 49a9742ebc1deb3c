"""Audit entries and the port that records them."""

from __future__ import annotations

from typing import Any, Literal, Protocol

from pydantic import BaseModel

from stepwise.turns.models import TurnMeta

Outcome = Literal["ok", "error", "denied", "unknown_tool", "invalid_arguments", "not_run"]
Approval = Literal["not_needed", "approved", "denied", "expired", "unavailable"]


class AuditEntry(BaseModel):
    """One tool call: tool, user, arguments, outcome, approval decision, time."""

    user_id: int
    chat_id: int
    turn_id: str
    tool_use_id: str
    tool: str
    arguments: dict[str, Any]
    outcome: Outcome
    result: str
    approval: Approval
    created_at: str


def call_entry(
    meta: TurnMeta, call: dict[str, Any], outcome: Outcome, result: str, approval: Approval, now: str
) -> AuditEntry:
    """The audit entry of one tool_use block of a turn."""
    return AuditEntry(
        user_id=meta.user_id,
        chat_id=meta.chat_id,
        turn_id=meta.turn_id,
        tool_use_id=call["id"],
        tool=call["name"],
        arguments=call.get("input") or {},
        outcome=outcome,
        result=result,
        approval=approval,
        created_at=now,
    )


class AuditLog(Protocol):
    """Where audit entries go. Implementations: DynamoDB, and in memory for tests."""

    def record(self, entry: AuditEntry) -> None:
        """Append an entry."""
        ...

    def entries(self, user_id: int) -> list[AuditEntry]:
        """The user's entries, oldest first."""
        ...
