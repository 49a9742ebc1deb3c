"""RunTools: run one step's tool calls in order; calls that need approval wait for the user's decision.

Safe calls run at once. Approval-needing calls that are valid are gathered into one approval request and the
state machine waits (RequestApproval); when it comes back here the approval lifecycle
(`stepwise.approvals.lifecycle`) gives the decision: approved calls run, denied or unanswered ones return
"denied by the user" and change nothing. Results are recorded per call as they happen, so a retried RunTools
never runs a call twice; a crash between a call's effect and the recording of its result is covered by the
tool-call ledger (each call runs with its own `call_id`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from aws_lambda_powertools import Logger

from stepwise.approvals import lifecycle
from stepwise.approvals.models import ApprovalCall
from stepwise.audit.log import Approval, Outcome, call_entry
from stepwise.ids import iso_utc
from stepwise.ledger.models import tool_call_id
from stepwise.states.contracts import RunToolsInput, RunToolsOutput
from stepwise.tools.registry import ToolContext, ToolError, ToolResult

if TYPE_CHECKING:
    from stepwise.approvals.lifecycle import Decision
    from stepwise.states.services import TurnServices

logger = Logger(child=True)


def run_tools(request: RunToolsInput, services: TurnServices) -> RunToolsOutput:
    """Run (or settle) every tool call of the step; see the module docstring."""
    turn = request.turn
    meta = services.turns.get_meta(turn.turn_id)
    step = services.turns.get_step(turn.turn_id, request.step)
    now = iso_utc(services.clock())
    if lifecycle.wait_never_began(services.approvals, step.approval_id, step.approval_asks):
        step.approval_asks += 1
        services.turns.put_step(turn.turn_id, step)
        logger.info("approval handed to the wait again", extra={"approval_id": step.approval_id})
        return RunToolsOutput(status="needs_approval", approval_id=step.approval_id)
    decision = lifecycle.settle(services.approvals, services.telegram, step.approval_id, now)
    waiting: list[ApprovalCall] = []
    for call in step.tool_uses:
        if call["id"] in step.partial_results:
            continue
        context = ToolContext(
            user_id=meta.user_id,
            chat_id=meta.chat_id,
            turn_id=turn.turn_id,
            call_id=tool_call_id(turn.turn_id, call["id"]),
            now=now,
        )
        result, outcome, approval = _run_one(call, decision, context, services, waiting)
        if result is None:
            continue
        # The audit entry first, keyed by the model step's time: a crash before the result is recorded makes
        # the retry write the same entry again, never lose it (the ledger returns the recorded result).
        services.audit.record(call_entry(meta, call, outcome, result.content, approval, step.created_at))
        step.partial_results[call["id"]] = result.block(call["id"])
        services.turns.put_step(turn.turn_id, step)
    if waiting:
        approval_request = lifecycle.open_request(
            services.approvals,
            approval_id=services.new_id()[:12],
            turn_id=turn.turn_id,
            chat_id=meta.chat_id,
            user_id=meta.user_id,
            step=step.step,
            calls=waiting,
            now=now,
        )
        step.approval_id = approval_request.approval_id
        step.approval_asks = 1
        services.turns.put_step(turn.turn_id, step)
        return RunToolsOutput(status="needs_approval", approval_id=approval_request.approval_id)
    step.tool_results = [step.partial_results[call["id"]] for call in step.tool_uses]
    services.turns.put_step(turn.turn_id, step)
    errors = sum(1 for block in step.tool_results if block.get("is_error"))
    return RunToolsOutput(status="done", results=len(step.tool_results), errors=errors)


def _run_one(
    call: dict[str, Any],
    decision: Decision | None,
    context: ToolContext,
    services: TurnServices,
    waiting: list[ApprovalCall],
) -> tuple[ToolResult | None, Outcome, Approval]:
    """One call's result, outcome and approval state; (None, ...) when it must wait for approval."""
    try:
        tool, args = services.tools.parse(call["name"], call.get("input"))
    except ToolError as error:
        outcome: Outcome = "unknown_tool" if services.tools.get(call["name"]) is None else "invalid_arguments"
        return ToolResult(content=str(error), is_error=True), outcome, "not_needed"
    if not tool.needs_approval:
        result = services.tools.run(context, tool, args)
        return result, "error" if result.is_error else "ok", "not_needed"
    if decision is None:
        try:
            waiting.append(
                ApprovalCall(tool_use_id=call["id"], description=services.tools.describe(context, tool, args))
            )
        except ToolError as error:
            return ToolResult(content=str(error), is_error=True), "error", "not_needed"
        return None, "ok", "not_needed"
    if decision != "approved":
        return ToolResult(content=lifecycle.refusal(decision), is_error=True), "denied", decision
    result = services.tools.run(context, tool, args)
    return result, "error" if result.is_error else "ok", "approved"
