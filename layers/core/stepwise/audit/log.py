"""Audit entries and the port that records them."""

from typing import TYPE_CHECKING, Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict

if TYPE_CHECKING:
    from stepwise.model.blocks import ToolUseBlock
    from stepwise.turn_records.models import TurnMeta

Outcome = Literal["ok", "error", "denied", "unknown_tool", "invalid_arguments", "not_run"]
Approval = Literal["not_needed", "approved", "denied", "expired", "unavailable", "requested"]


class AuditEntry(BaseModel):
    """One tool call: tool, user, arguments, outcome, approval decision, time."""

    model_config = ConfigDict(defer_build=True)

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
    meta: "TurnMeta", call: "ToolUseBlock", outcome: Outcome, result: str, approval: Approval, now: str
) -> AuditEntry:
    """The audit entry of one tool_use block of a turn. `now` should be the model step's time, so that a
    retried state records the same entry again instead of a second one."""
    return AuditEntry(
        user_id=meta.user_id,
        chat_id=meta.chat_id,
        turn_id=meta.turn_id,
        tool_use_id=call["id"],
        tool=call["name"],
        arguments=call["input"],
        outcome=outcome,
        result=result,
        approval=approval,
        created_at=now,
    )


class AuditLog(Protocol):
    """Where audit entries go. Implementations: DynamoDB, and in memory for tests."""

    def record(self, entry: AuditEntry) -> None:
        """Write an entry; the same call (created_at and tool_use_id) recorded again replaces it."""
        ...

    def entries(self, user_id: int) -> list[AuditEntry]:
        """The user's entries, oldest first."""
        ...
