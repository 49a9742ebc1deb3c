"""An in-memory ApprovalStore for unit tests."""

from __future__ import annotations

from stepwise.approvals.models import ApprovalRequest, ApprovalStatus


class InMemoryApprovalStore:
    """Requests in a dict."""

    def __init__(self) -> None:
        self.requests: dict[str, ApprovalRequest] = {}

    def create(self, request: ApprovalRequest) -> None:
        if request.approval_id in self.requests:
            raise KeyError(f"approval {request.approval_id} exists")
        self.requests[request.approval_id] = request.model_copy()

    def get(self, approval_id: str) -> ApprovalRequest | None:
        request = self.requests.get(approval_id)
        return request.model_copy() if request else None

    def pending(self, user_id: int, since: str) -> list[ApprovalRequest]:
        found = [
            r
            for r in self.requests.values()
            if r.user_id == user_id and r.status == "pending" and r.created_at >= since
        ]
        return [r.model_copy() for r in sorted(found, key=lambda r: r.created_at)]

    def attach_token(self, approval_id: str, task_token: str) -> None:
        self.requests[approval_id].task_token = task_token

    def attach_message(self, approval_id: str, message_id: int, message_html: str) -> None:
        self.requests[approval_id].message_id = message_id
        self.requests[approval_id].message_html = message_html

    def decide(
        self,
        approval_id: str,
        status: ApprovalStatus,
        now: str,
        by: int | None,
        expected: ApprovalStatus = "pending",
    ) -> bool:
        request = self.requests.get(approval_id)
        if request is None or request.status != expected:
            return False
        request.status, request.decided_at, request.decided_by = status, now, by
        return True
