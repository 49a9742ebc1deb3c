"""RequestApproval: show the request with Approve / Deny buttons; the turn waits on its task token."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from stepwise.approvals.lifecycle import show_request
from stepwise.states.contracts.request_approval import RequestApprovalInput, RequestApprovalOutput

if TYPE_CHECKING:
    from stepwise.states.services import TurnServices

logger = logging.getLogger(__name__)


def request_approval(request: RequestApprovalInput, services: TurnServices) -> RequestApprovalOutput:
    """Show the request (its buttons go out once), then let the chat go on while the turn waits. A background
    job waits at most until its deadline (its execution's input says how long), and holds no chat to free."""
    in_job = request.turn.job is not None
    message_id = show_request(
        services.approvals,
        services.telegram,
        request.approval_id,
        request.task_token,
        services.job_limits.approval_wait(services.approval_timeout_seconds)
        if in_job
        else services.approval_timeout_seconds,
    )
    if in_job:
        logger.info("background job waits for its approval")
        return RequestApprovalOutput(message_id=message_id)
    # While the turn waits for the tap, the chat goes on: new messages get turns of their own.
    next_turn = services.sequencer().park(request.turn.conversation, request.turn.turn_id)
    logger.info("turn parked on its approval", extra={"next_turn": next_turn})
    return RequestApprovalOutput(message_id=message_id)
