"""RequestApproval: show the request with Approve / Deny buttons; the turn waits on its task token."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from stepwise.states.contracts.request_approval import RequestApprovalInput, RequestApprovalOutput
from stepwise.states.policy import policy_for

if TYPE_CHECKING:
    from stepwise.services import TurnServices

logger = logging.getLogger(__name__)


def request_approval(request: RequestApprovalInput, services: TurnServices) -> RequestApprovalOutput:
    """Show the request (its buttons go out once), waiting as long as the turn's policy says, then let the
    chat go on while the turn waits (a background job holds no chat to free)."""
    policy = policy_for(request.turn)
    message_id = policy.show_approval(request.approval_id, request.task_token, services)
    if not policy.holds_chat:
        logger.info("background job waits for its approval")
        return RequestApprovalOutput(message_id=message_id)
    # While the turn waits for the tap, the chat goes on: new messages get turns of their own.
    next_turn = services.outbound.sequencer().park(request.turn.conversation, request.turn.turn_id)
    logger.info("turn parked on its approval", extra={"next_turn": next_turn})
    return RequestApprovalOutput(message_id=message_id)
