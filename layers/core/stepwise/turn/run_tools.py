"""RunTools: run one step's tool calls in order; calls that need approval wait for the user's decision.

Safe calls run at once. Approval-needing calls that are valid are gathered into one approval request and the
state machine waits (RequestApproval); when it comes back here the recorded decision settles them: approved
calls run, denied or unanswered ones return "denied by the user" and change nothing. Results are recorded per
call as they happen, so a retried RunTools never runs a call twice.
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools import Logger

from stepwise.approvals.messages import decided_html
from stepwise.approvals.models import ApprovalCall, ApprovalRequest
from stepwise.audit.log import Approval, Outcome, call_entry
from stepwise.ids import iso_utc
from stepwise.telegram.errors import TelegramError
from stepwise.tools.registry import ToolContext, ToolError, ToolResult
from stepwise.turn.contracts import RunToolsInput, RunToolsOutput
from stepwise.turn.services import TurnServices
from stepwise.turns.models import ModelStep

logger = Logger(child=True)

DENIED = "Denied by the user; nothing was changed."
EXPIRED = "The user did not answer the approval request in time; counted as denied: nothing was changed."
UNAVAILABLE = "Approval could not be requested, so the call did not run: nothing was changed."


def run_tools(request: RunToolsInput, services: TurnServices) -> RunToolsOutput:
    """Run (or settle) every tool call of the step; see the module docstring."""
    turn = request.turn
    meta = services.turns.get_meta(turn.turn_id)
    step = services.turns.get_step(turn.turn_id, request.step)
    now = iso_utc(services.clock())
    context = ToolContext(
        user_id=meta.user_id,
        chat_id=meta.chat_id,
        turn_id=turn.turn_id,
        now=now,
        tasks=services.tasks,
        memory=services.memory,
    )
    decision = _settle_approval(step, services, now)
    waiting: list[ApprovalCall] = []
    for call in step.tool_uses:
        if call["id"] in step.partial_results:
            continue
        result, outcome, approval = _run_one(call, decision, context, services, waiting)
        if result is None:
            continue
        step.partial_results[call["id"]] = result.block(call["id"])
        services.turns.put_step(turn.turn_id, step)
        services.audit.record(call_entry(meta, call, outcome, result.content, approval, now))
    if waiting:
        approval_request = ApprovalRequest(
            approval_id=services.new_id()[:12],
            turn_id=turn.turn_id,
            chat_id=meta.chat_id,
            user_id=meta.user_id,
            step=step.step,
            calls=waiting,
            created_at=now,
        )
        services.approvals.create(approval_request)
        step.approval_id = approval_request.approval_id
        services.turns.put_step(turn.turn_id, step)
        logger.info(
            "approval needed", extra={"approval_id": approval_request.approval_id, "calls": len(waiting)}
        )
        return RunToolsOutput(status="needs_approval", approval_id=approval_request.approval_id)
    step.tool_results = [step.partial_results[call["id"]] for call in step.tool_uses]
    services.turns.put_step(turn.turn_id, step)
    errors = sum(1 for block in step.tool_results if block.get("is_error"))
    return RunToolsOutput(status="done", results=len(step.tool_results), errors=errors)


def _run_one(
    call: dict[str, Any],
    decision: Approval | None,
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
        message = {"denied": DENIED, "expired": EXPIRED}.get(decision, UNAVAILABLE)
        return ToolResult(content=message, is_error=True), "denied", decision
    result = services.tools.run(context, tool, args)
    return result, "error" if result.is_error else "ok", "approved"


def _settle_approval(step: ModelStep, services: TurnServices, now: str) -> Approval | None:
    """The decision on this step's approval request; None when none was asked yet.

    Reaching here with the request still pending means the wait ended without a press (timeout) or the
    request could not be shown: it expires, which counts as Deny, and its message says so.
    """
    if step.approval_id is None:
        return None
    approval = services.approvals.get(step.approval_id)
    if approval is None:
        return "unavailable"
    if approval.status == "pending":
        if not services.approvals.decide(approval.approval_id, "expired", now, None):
            approval = services.approvals.get(step.approval_id) or approval
        else:
            approval.status = "expired"
            _show_expiry(approval, services)
    if approval.status == "expired" and approval.message_id is None:
        return "unavailable"
    return approval.status if approval.status != "pending" else "unavailable"


def _show_expiry(approval: ApprovalRequest, services: TurnServices) -> None:
    if approval.message_id is None:
        return
    try:
        services.telegram().edit_message_text(
            approval.chat_id,
            approval.message_id,
            decided_html(approval.message_html, "expired"),
            parse_mode="HTML",
        )
    except TelegramError as error:
        logger.warning("could not mark the approval as expired", extra={"error": str(error)})
