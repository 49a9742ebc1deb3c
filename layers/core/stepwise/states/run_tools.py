"""RunTools: run one step's tool calls in order; calls that need approval wait for the user's decision.

Three states run this function. `RunTools` runs a step none of whose calls needs approval (CallModel said
so), then the model is called again. `RunToolsOrAskApproval` runs the safe calls at once and gathers the valid
approval-needing ones into one approval request, and the state machine waits (RequestApproval).
`RunApprovedTools` comes back from that wait: it takes the chat back first, then the approval lifecycle
(`stepwise.approvals.lifecycle`) gives the decision: approved calls run, denied or unanswered ones return
"denied by the user" and change nothing. A call whose arguments cannot all be shown in the request is refused
before anything waits: the model gets the reason, the chat one line saying why, and the audit files it as
denied (approval `unavailable`), with the reason. Results are recorded per call as they happen, so a retried
RunTools never runs a call twice; a crash between a call's effect and the recording of its result is covered
by the tool-call ledger (each call runs with its own `call_id`).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, NamedTuple

from stepwise.approvals import lifecycle
from stepwise.approvals.arguments import call_room
from stepwise.approvals.lifecycle import refusal
from stepwise.approvals.models import ApprovalCall, Requester
from stepwise.approvals.wording import not_shown
from stepwise.audit.log import call_entry
from stepwise.inbox.outside_call import OutsideCall
from stepwise.ledger.models import tool_call_id
from stepwise.remote_tools.config import SEPARATOR
from stepwise.secretary.kinds import ContactWrote
from stepwise.states.contracts.base import Next
from stepwise.states.contracts.run_tools import RunToolsInput
from stepwise.states.policy import policy_for, policy_of
from stepwise.telegram.errors import TelegramError, TelegramTransientError
from stepwise.tools.calls import Answer, parse_call, run_call
from stepwise.tools.registry import NotShownError, ToolContext, ToolError, ToolResult
from stepwise.turn.ids import iso_utc
from stepwise.turn_records.models import Chat, Checkin, Command, JobReport, JobRun, Reminder, RulesCommand

if TYPE_CHECKING:
    from collections.abc import Sequence

    from pydantic import BaseModel

    from stepwise.approvals.lifecycle import Decision
    from stepwise.model.blocks import ToolUseBlock
    from stepwise.services import TurnServices
    from stepwise.states.policy import TurnPolicy
    from stepwise.tools.registry import Tool, ToolRegistry
    from stepwise.turn_records.models import ModelStep, TurnMeta

logger = logging.getLogger(__name__)

MAX_RETAKE_RETRIES = 12  # RunApprovedTools' retries while the chat is busy (the ASL's ChatBusyError retrier)
NOT_ASKED = "Not run: this call needs the user's approval, and this round could not ask for it."


class Pending(NamedTuple):
    """A call that waits for approval, until the round's such calls are described together."""

    call: ToolUseBlock
    tool: Tool[Any]
    args: BaseModel
    context: ToolContext


class ChatBusyError(RuntimeError):
    """Another turn holds the chat; the state machine retries with backoff (ASL error name ChatBusyError)."""


def run_tools(request: RunToolsInput, services: TurnServices) -> Next:
    """Run (or settle) every tool call of the step; see the module docstring. Route `model` when every call
    has its result, `approval` when some wait for the user."""
    turn = request.turn
    if request.resume and policy_for(turn).holds_chat:  # back from the wait: the chat first
        retake_chat(request, services)
    meta = services.stores.turns.get_meta(turn.turn_id)
    policy = policy_of(meta.kind)
    step = services.stores.turns.get_step(turn.turn_id, request.next.step)
    ask = request.next.model_copy(update={"route": "approval", "wait_seconds": 0})
    now = iso_utc(services.clock())
    decision: Decision | None = None
    if step.approval_id is not None:  # a round that asked (the approvals' code is loaded only then)
        if lifecycle.wait_never_began(services.stores.approvals, step.approval_id, step.approval_asks):
            step.approval_asks += 1
            services.stores.turns.put_step(turn.turn_id, step)
            logger.info("approval handed to the wait again", extra={"approval_id": step.approval_id})
            return ask.model_copy(update={"approval_id": step.approval_id})
        decision = lifecycle.settle(
            services.stores.approvals, services.outbound.telegram, step.approval_id, now
        )
    waiting: list[Pending] = []
    to_run = [call for call in step.tool_uses if call["id"] not in step.partial_results]
    tools = tools_for_calls(policy, meta, [call["name"] for call in to_run], services)
    for call in to_run:
        context = ToolContext(
            meta.scope,
            turn_id=turn.turn_id,
            call_id=tool_call_id(turn.turn_id, call["id"]),
            now=now,
            requester=requester_of(meta),
        )
        answer = _run_one(call, decision, context, tools, waiting, request.approvals)
        if answer is not None:
            _record(call, answer, step, meta, services)
    # The calls waiting for approval are described together: each gets its share of the message's room.
    asked: list[ApprovalCall] = []
    refused: list[tuple[ToolUseBlock, Answer]] = []
    for call, tool, args, context in waiting:
        try:
            description = tools.describe(context, tool, args, call_room(len(waiting)))
        except NotShownError as error:  # refused: never shown in part, nothing waits for it
            refused.append(
                (call, Answer(ToolResult(content=str(error), is_error=True), "denied", "unavailable"))
            )
            continue
        except ToolError as error:  # nothing to approve (no such task): fails at once
            _record(
                call, Answer(ToolResult(content=str(error), is_error=True), "error"), step, meta, services
            )
            continue
        asked.append(ApprovalCall(tool_use_id=call["id"], description=description))
    if refused:
        _tell_not_shown(meta, [call["name"] for call, _ in refused], services)
        for call, answer in refused:
            _record(call, answer, step, meta, services)
    if asked:
        approval_request = lifecycle.open_request(
            services.stores.approvals,
            approval_id=services.new_id()[:12],
            turn_id=turn.turn_id,
            scope=meta.scope,
            step=step.step,
            calls=asked,
            requester=requester_of(meta),
            now=now,
        )
        step.approval_id = approval_request.approval_id
        step.approval_asks = 1
        services.stores.turns.put_step(turn.turn_id, step)
        return ask.model_copy(update={"approval_id": approval_request.approval_id})
    step.tool_results = [step.partial_results[call["id"]] for call in step.tool_uses]
    services.stores.turns.put_step(turn.turn_id, step)
    errors = sum(1 for block in step.tool_results if block["is_error"])
    logger.info("tool calls done", extra={"results": len(step.tool_results), "errors": errors})
    if policy.after_tools(meta, step, services):  # an MCP client's call: the chat is told, no model
        return request.next.model_copy(update={"route": "reply", "approval_id": None, "wait_seconds": 0})
    return request.next.model_copy(update={"route": "model", "approval_id": None, "wait_seconds": 0})


def _record(
    call: ToolUseBlock, answer: Answer, step: ModelStep, meta: TurnMeta, services: TurnServices
) -> None:
    """Keep a call's answer: the audit entry first, keyed by the model step's time (a crash before the result
    is recorded makes the retry write the same entry again, never lose it; the ledger returns the recorded
    result), then the result in the step."""
    services.stores.audit.record(
        call_entry(meta, call, answer.outcome, answer.result.content, answer.approval, step.created_at)
    )
    step.partial_results[call["id"]] = answer.result.block(call["id"])
    services.stores.turns.put_step(meta.turn_id, step)


def _tell_not_shown(meta: TurnMeta, tools: list[str], services: TurnServices) -> None:
    """The chat's one line about the round's calls refused because they cannot be shown. Sent before the
    refusals are recorded, so a retried state sends it again rather than never (a transient failure raises:
    the state is retried); a lasting one (the bot blocked) only logs, the model still hears why."""
    try:
        services.outbound.telegram().send_message(
            meta.chat_id, not_shown(requester_of(meta), tools), message_thread_id=meta.topic
        )
    except TelegramTransientError:
        raise
    except TelegramError as error:
        logger.warning("could not say why a call was refused", extra={"error": str(error)})


def requester_of(meta: TurnMeta) -> Requester:
    """Who the turn's approval request names: its background job, the MCP client whose call it runs, the
    check-in it carries out, or else the chat's own model."""
    match meta.kind:
        case JobRun(number=number, title=title):
            return Requester(kind="job", number=number, name=title)
        case OutsideCall(connection=connection):
            return Requester(kind="mcp_client", name=connection)
        case Checkin(number=number, text=text):
            return Requester(kind="checkin", number=number, name=text)
        case ContactWrote(contact=contact):
            return Requester(kind="secretary", name=contact)
        case Chat() | Command() | RulesCommand() | Reminder() | JobReport():
            return Requester()


def retake_chat(request: RunToolsInput, services: TurnServices) -> None:
    """Back from an approval wait: hold the chat again before going on. ChatBusyError while another turn holds
    it; after MAX_RETAKE_RETRIES busy answers (a few minutes) the turn goes on regardless."""
    turn = request.turn
    if services.outbound.sequencer().retake(turn.conversation, turn.turn_id):
        return
    if request.retake_attempt < MAX_RETAKE_RETRIES:
        raise ChatBusyError(f"conversation {turn.conversation!r} is busy with another turn")
    logger.warning("chat still busy after every retry; going on regardless", extra={"turn_id": turn.turn_id})


def _run_one(
    call: ToolUseBlock,
    decision: Decision | None,
    context: ToolContext,
    tools: ToolRegistry,
    waiting: list[Pending],
    may_ask: bool,
) -> Answer | None:
    """One call's answer (result, outcome, approval state); None when it must wait for approval (it is then
    in `waiting`, to be described with the round's other such calls). A call that
    needs approval where none may be asked (`may_ask` False and no decision) is refused, never run. Calls are
    parsed and run through `stepwise.tools.calls`, as an MCP client's calls are."""
    parsed = parse_call(tools, call["name"], call["input"])
    if isinstance(parsed, Answer):
        return parsed
    tool, args = parsed
    if not tool.asks_approval(args):
        return run_call(tools, context, tool, args, "not_needed")
    if decision is None and not may_ask:
        logger.warning("a call needs approval in a round that cannot ask; refused", extra={"tool": tool.name})
        return Answer(ToolResult(content=NOT_ASKED, is_error=True), "denied")
    if decision is None:
        waiting.append(Pending(call, tool, args, context))
        return None
    if decision != "approved":
        return Answer(ToolResult(content=refusal(decision), is_error=True), "denied", decision)
    return run_call(tools, context, tool, args, "approved")


def tools_for_calls(
    policy: TurnPolicy, meta: TurnMeta, names: Sequence[str], services: TurnServices
) -> ToolRegistry:
    """The tools of a turn that runs calls of these tools. The outside servers' lists this container read may
    be older than the ones the model was offered (read up to 20 s ago, by a warm-up say, before CallModel
    fetched a new list): when a call names an outside tool (`<server>__<tool>`) they lack, they are read again
    first, once, so that "Unknown tool" is the answer only when the current lists lack it too."""
    tools = policy.tools(meta, services)
    missing = [name for name in names if tools.get(name) is None]
    if not missing or services.tools.reread_remote is None:
        return tools
    if any(SEPARATOR in name for name in missing):
        services.tools.reread_remote()
        tools = policy.tools(meta, services)
    return tools
