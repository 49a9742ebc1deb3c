"""RequestApproval's shared way of showing a request: Approve / Deny buttons in the conversation
(`approvals.lifecycle.show_request`), waiting as long as the turn's policy says. The chat's turns and the
background jobs show theirs so; a secretary turn shows a suggested reply instead (`states.secretary_turn`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from stepwise.approvals.lifecycle import show_request

if TYPE_CHECKING:
    from stepwise.services import TurnServices


def show_approve_deny(approval_id: str, task_token: str, wait_seconds: int, services: TurnServices) -> int:
    """Show the request once and keep its task token; the id of the message with the buttons."""
    return show_request(
        services.stores.approvals, services.outbound.telegram, approval_id, task_token, wait_seconds
    )
