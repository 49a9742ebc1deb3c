"""RequestApproval: show the request with Approve / Deny buttons; the turn waits on its task token."""

from __future__ import annotations

from aws_lambda_powertools import Logger

from stepwise.approvals.messages import approval_html, approval_keyboard
from stepwise.turn.contracts import RequestApprovalInput, RequestApprovalOutput
from stepwise.turn.services import TurnServices

logger = Logger(child=True)


class ApprovalMissingError(RuntimeError):
    """The approval request RunTools created is gone (a wiring error)."""


def request_approval(request: RequestApprovalInput, services: TurnServices) -> RequestApprovalOutput:
    """Store the task token first (a fast press must find it), then send the message once."""
    approval = services.approvals.get(request.approval_id)
    if approval is None:
        raise ApprovalMissingError(f"no approval request {request.approval_id}")
    services.approvals.attach_token(approval.approval_id, request.task_token)
    if approval.message_id is not None:  # a retried state: the buttons are out already
        return RequestApprovalOutput(message_id=approval.message_id)
    html = approval_html(approval.calls, services.approval_timeout_seconds)
    message_id = services.telegram().send_message(
        approval.chat_id, html, parse_mode="HTML", reply_markup=approval_keyboard(approval.approval_id)
    )
    services.approvals.attach_message(approval.approval_id, message_id, html)
    logger.info("approval requested", extra={"approval_id": approval.approval_id})
    return RequestApprovalOutput(message_id=message_id)
