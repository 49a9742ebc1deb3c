"""An MCP client's call that waits for the user's approval (the /mcp endpoint's `ask_in_telegram`): its turn
has one step, that call, made without a model, and its reply says what the client asked and what came of it.
Loaded only by such a turn (`states.policy.OutsideCallTurn`, `states.turn_kind.decide_turn`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from stepwise.approvals.models import Requester
from stepwise.approvals.wording import asks
from stepwise.inbox.outside_call import OutsideCall
from stepwise.states.contracts.base import Next
from stepwise.turn.ids import iso_utc
from stepwise.turn_records.models import ModelStep, Reply

if TYPE_CHECKING:
    from stepwise.services import TurnServices
    from stepwise.turn_records.models import TurnMeta

OUTSIDE_CALL_ID = "mcp_{message_id}"  # the tool_use id of an outside call in its turn


def start_outside_call(meta: TurnMeta, call: OutsideCall, services: TurnServices) -> Next:
    """The outside call as the turn's step 0, a tool call like the model's (a retry keeps the first step)."""
    if not services.stores.turns.steps(meta.turn_id):
        message_id = services.new_id()
        services.stores.turns.put_step(
            meta.turn_id,
            ModelStep(
                step=0,
                content=[
                    {
                        "type": "tool_use",
                        "id": OUTSIDE_CALL_ID.format(message_id=message_id),
                        "name": call.tool,
                        "input": call.arguments,
                    }
                ],
                stop_reason="tool_use",
                model="outside_call",
                message_id=message_id,
                created_at=iso_utc(services.clock()),
            ),
        )
    return Next(route="tools_with_approval", step=0)


def outside_call_reply(meta: TurnMeta, call: OutsideCall, step: ModelStep, services: TurnServices) -> None:
    """The reply of an outside call's turn, once its call (`step`, the turn's only step) has its result: what
    the client asked and what came of it."""
    result = step.tool_results[0]
    content = result["content"]
    outcome = f"Not done. {content}" if result["is_error"] else f"Done. {content}"

    asked = asks(Requester(kind="mcp_client", name=call.connection), [call.description], asked=True)
    services.stores.turns.put_reply(
        meta.turn_id,
        Reply(
            text=f"{asked} {outcome}",
            source="outside_call",
            message_id=step.message_id,
            created_at=step.created_at,
        ),
    )
