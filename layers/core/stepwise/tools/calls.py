"""One tool call, the way every caller makes it: RunTools for the model's calls, the MCP server
(`stepwise.mcp.server`) for an outside client's.

Both parse the arguments with the registry (the same errors, word for word), run the tool through the registry
(the tool-call ledger, keyed by `ToolContext.call_id`) and file the call in the audit log with the same
outcomes. RunTools asks the user to approve a call within the turn; the MCP endpoint (`call_unattended` with
an `AskApproval`) hands such a call to a turn of its own, which asks the user in Telegram and runs it once
approved; a caller that cannot ask at all refuses every tool that needs approval.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from stepwise.approvals.arguments import call_room
from stepwise.audit.log import AuditEntry
from stepwise.tools.registry import NotShownError, ToolError, ToolResult

if TYPE_CHECKING:
    from pydantic import BaseModel

    from stepwise.audit.log import Approval, AuditLog, Outcome
    from stepwise.tools.registry import Tool, ToolContext, ToolRegistry

NEEDS_APPROVAL = (
    "Not run: {tool} changes the user's data for good, so it needs the user's approval in Telegram, "
    "and a call from outside a conversation cannot ask for it."
)


class AskApproval(Protocol):
    """Hands a call that needs approval to the user (in Telegram); returns what the caller is told now."""

    def __call__(
        self, context: ToolContext, tool: str, arguments: dict[str, Any], description: str
    ) -> str: ...


@dataclass(frozen=True)
class Answer:
    """A call's result, and how the audit log files it."""

    result: ToolResult
    outcome: Outcome
    approval: Approval = "not_needed"


def parse_call(
    tools: ToolRegistry, name: str, arguments: dict[str, Any]
) -> tuple[Tool[Any], BaseModel] | Answer:
    """The tool and its validated arguments, or the error answer for an unknown tool or invalid arguments."""
    try:
        return tools.parse(name, arguments)
    except ToolError as error:
        outcome: Outcome = "unknown_tool" if tools.get(name) is None else "invalid_arguments"
        return Answer(ToolResult(content=str(error), is_error=True), outcome)


def run_call(
    tools: ToolRegistry, context: ToolContext, tool: Tool[Any], args: BaseModel, approval: Approval
) -> Answer:
    """Run a parsed call (once per `context.call_id`, see the registry); its failures are error answers."""
    result = tools.run(context, tool, args)
    return Answer(result, "error" if result.is_error else "ok", approval)


def call_unattended(
    tools: ToolRegistry,
    audit: AuditLog,
    context: ToolContext,
    name: str,
    arguments: dict[str, Any],
    ask: AskApproval | None = None,
) -> Answer:
    """A call made outside a conversation (an MCP client's): parsed and run like the model's, and audited
    under `context.call_id` at `context.now`. A tool that needs approval is not run here: with `ask`, it is
    handed to the user (outcome `not_run`, approval `requested`; the turn that runs it audits the run), else
    refused (outcome `denied`, approval `unavailable`), as is one whose arguments cannot all be shown."""
    parsed = parse_call(tools, name, arguments)
    if isinstance(parsed, Answer):
        answer = parsed
    elif parsed[0].asks_approval(parsed[1]) and ask is not None:
        answer = _ask(tools, context, name, arguments, parsed[0], parsed[1], ask)
    elif parsed[0].asks_approval(parsed[1]):
        refusal = ToolResult(content=NEEDS_APPROVAL.format(tool=name), is_error=True)
        answer = Answer(refusal, "denied", "unavailable")
    else:
        answer = run_call(tools, context, *parsed, approval="not_needed")
    record_call(audit, context, name, arguments, answer.outcome, answer.result.content, answer.approval)
    return answer


def call_confirmed(
    tools: ToolRegistry, audit: AuditLog, context: ToolContext, name: str, arguments: dict[str, Any]
) -> Answer:
    """A call the user made themselves and confirmed in their own app (the Mini App's Done, Delete, Forget,
    Cancel): parsed and run like the model's, once per `context.call_id`, and audited as approved when the
    tool needs approval (the user's confirmation is the approval: no second prompt in the chat)."""
    parsed = parse_call(tools, name, arguments)
    if isinstance(parsed, Answer):
        answer = parsed
    else:
        answer = run_call(
            tools, context, *parsed, approval="approved" if parsed[0].needs_approval else "not_needed"
        )
    record_call(audit, context, name, arguments, answer.outcome, answer.result.content, answer.approval)
    return answer


def record_call(
    audit: AuditLog,
    context: ToolContext,
    name: str,
    arguments: dict[str, Any],
    outcome: Outcome,
    result: str,
    approval: Approval,
) -> None:
    """The audit entry of one call made outside a turn (an MCP client's, the Mini App's), under its context's
    ids and time."""
    audit.record(
        AuditEntry(
            user_id=context.user_id,
            chat_id=context.scope.conversation.chat_id,
            turn_id=context.turn_id,
            tool_use_id=context.call_id,
            tool=name,
            arguments=arguments,
            outcome=outcome,
            result=result,
            approval=approval,
            created_at=context.now,
        )
    )


def _ask(
    tools: ToolRegistry,
    context: ToolContext,
    name: str,
    arguments: dict[str, Any],
    tool: Tool[Any],
    args: BaseModel,
    ask: AskApproval,
) -> Answer:
    try:
        description = tools.describe(context, tool, args, call_room(1))
    except NotShownError as error:  # refused, as a denied call is: nothing waits for approval
        return Answer(ToolResult(content=str(error), is_error=True), "denied", "unavailable")
    except ToolError as error:  # e.g. no such task: nothing to approve
        return Answer(ToolResult(content=str(error), is_error=True), "error")
    told = ask(context, name, arguments, description)
    return Answer(ToolResult(content=told), "not_run", "requested")
