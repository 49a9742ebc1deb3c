"""The port for approval requests."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from stepwise.approvals.models import ApprovalRequest, ApprovalStatus


class ApprovalStore(Protocol):
    """Approval requests. Implementations: DynamoDB (with TTL), and in memory for tests."""

    def create(self, request: ApprovalRequest) -> None:
        """Store a new request."""
        ...

    def get(self, approval_id: str) -> ApprovalRequest | None:
        """A request, or None when unknown or expired from the table."""
        ...

    def attach_token(self, approval_id: str, task_token: str) -> None:
        """Record the task token that resumes the waiting turn."""
        ...

    def attach_message(self, approval_id: str, message_id: int, message_html: str) -> None:
        """Record the Telegram message that shows the buttons."""
        ...

    def decide(
        self,
        approval_id: str,
        status: ApprovalStatus,
        now: str,
        by: int | None,
        expected: ApprovalStatus = "pending",
    ) -> bool:
        """Move from `expected` to `status`; False when the request is no longer `expected`."""
        ...

    def pending(self, user_id: int, since: str) -> list[ApprovalRequest]:
        """The user's requests made at or after `since` (ISO time) that still wait for an answer, oldest
        first (the Mini App lists them)."""
        ...
