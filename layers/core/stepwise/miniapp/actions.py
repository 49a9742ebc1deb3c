"""What the page's buttons do, for the user who tapped them: mark a task done, delete a task, forget a memory,
cancel a reminder or check-in, revoke an MCP client, approve or deny a pending approval, set the time zone
and spoken replies, connect or disconnect an account at an OAuth server (docs/accounts.md).

The tools' data changes through the tool call path (`stepwise.tools.calls.call_confirmed`): the same tools
as the model's calls, once per call id (the ledger), audited. The tap, confirmed on the page with
`Telegram.WebApp.showConfirm`, is the user's own approval, so no second prompt appears in the chat. Approve
and Deny settle a pending request exactly as the chat's buttons do (`stepwise.approvals.lifecycle.decide`):
the waiting turn resumes once and the chat's prompt shows the answer. Every action is audited with the page
as its source (turn `app`, call id `app:<user>:<request id>`).
"""

from __future__ import annotations

import logging
import re
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, ValidationError

from stepwise.approvals.lifecycle import decide
from stepwise.miniapp.gate import HttpAnswer, refusal
from stepwise.telegram.conversation import Conversation, Scope
from stepwise.tools.calls import call_confirmed, record_call
from stepwise.tools.registry import EffectIncomplete, ToolContext
from stepwise.turn.ids import iso_utc

if TYPE_CHECKING:
    from stepwise.audit.log import Approval, Outcome
    from stepwise.miniapp.init_data import WebAppUser
    from stepwise.miniapp.services import AppServices

logger = logging.getLogger(__name__)

SOURCE = "app"  # the audit log's turn id of the page's actions
REQUEST_ID = re.compile(r"[A-Za-z0-9_-]{8,64}")
APPROVAL_ID = re.compile(r"[A-Za-z0-9_-]{1,40}")

ActionName = Literal[
    "task_done", "task_delete", "memory_forget", "reminder_cancel", "connection_revoke",
    "approve", "deny", "set_timezone", "set_voice_replies", "account_connect", "account_disconnect",
]  # fmt: skip
# The page's actions that are tool calls: the tool, and the argument the action's `target` fills.
TOOL_ACTIONS: dict[str, tuple[str, str]] = {
    "task_done": ("complete_task", "task_id"),
    "task_delete": ("delete_task", "task_id"),
    "memory_forget": ("forget", "memory_id"),
    "reminder_cancel": ("cancel_reminder", "reminder_id"),
    "set_timezone": ("set_timezone", "timezone"),
}


class ActionRequest(BaseModel):
    """One tap: the action, what it is about (a task's or reminder's number, a memory's id, a client's name,
    an approval's id, a zone, on/off), and the page's id for the tap (a retry of it sends the same id and
    changes nothing more)."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    action: ActionName
    target: StrictInt | StrictBool | str = Field(union_mode="left_to_right")
    request_id: str = Field(pattern=REQUEST_ID.pattern)


def act(user: WebAppUser, body: str, services: AppServices) -> HttpAnswer:
    """Do one action for `user`; 200 with what was done, or a clear 4xx (400 malformed, or a zone that is not
    one, with the reason; 404 no such thing of this user's; 409 already decided), 503 when a store could not
    make the effect now (retry the tap)."""
    try:
        request = ActionRequest.model_validate_json(body)
    except ValidationError as error:
        return refusal(400, "malformed action: " + "; ".join(_problems(error)))
    now = iso_utc(services.clock())
    call_id = f"{SOURCE}:{user.user_id}:{request.request_id}"
    context = ToolContext(Scope(Conversation(user.user_id), user.user_id), SOURCE, call_id, now)
    try:
        if request.action in TOOL_ACTIONS:
            return _tool(request, context, services)
        if request.action == "connection_revoke":
            return _revoke(request, context, services)
        if request.action in ("approve", "deny"):
            return _decide(request, context, services)
        if request.action in ("account_connect", "account_disconnect"):
            return _account(request, context, services)
        return _voice(request, context, services)
    except EffectIncomplete:
        logger.warning("a Mini App action could not be completed now", extra={"action": request.action})
        return refusal(503, "could not be done right now: tap again", {"retry-after": "1"})


def _problems(error: ValidationError) -> list[str]:
    return [
        f"{'.'.join(str(p) for p in problem['loc']) or 'body'}: {problem['msg']}"
        for problem in error.errors()
    ]


def _tool(request: ActionRequest, context: ToolContext, services: AppServices) -> HttpAnswer:
    tool, argument = TOOL_ACTIONS[request.action]
    if isinstance(request.target, bool):
        return refusal(400, f"malformed action: target must be a {argument}")
    answer = call_confirmed(services.tools(), services.audit, context, tool, {argument: request.target})
    if answer.outcome in ("unknown_tool", "invalid_arguments"):
        status = 404 if answer.outcome == "unknown_tool" else 400
        return refusal(status, answer.result.content)
    if answer.result.is_error:  # set_timezone's errors say what is wrong with the zone; others: no such item
        return refusal(400 if request.action == "set_timezone" else 404, answer.result.content)
    return HttpAnswer(200, {"done": answer.result.content})


def _revoke(request: ActionRequest, context: ToolContext, services: AppServices) -> HttpAnswer:
    if services.connections is None:
        return refusal(404, "MCP clients are not deployed here")
    name = request.target
    if not isinstance(name, str) or not name:
        return refusal(400, "malformed action: target must be a client's name")
    revoked = services.connections.revoke(context.user_id, name)
    said = f"Revoked “{name}”: its token no longer works." if revoked else f"You have no MCP client “{name}”."
    _audit(context, services, "revoke_connection", {"name": name}, "ok" if revoked else "error", said)
    return HttpAnswer(200, {"done": said}) if revoked else refusal(404, said)


def _decide(request: ActionRequest, context: ToolContext, services: AppServices) -> HttpAnswer:
    approval_id = request.target
    if not isinstance(approval_id, str) or not APPROVAL_ID.fullmatch(approval_id):
        return refusal(400, "malformed action: target must be an approval's id")
    status: Literal["approved", "denied"] = "approved" if request.action == "approve" else "denied"
    outcome = decide(approval_id, status, context.user_id, services.presses())
    decided = outcome.action == "decided"
    approval: Approval = status if decided else ("expired" if outcome.action == "expired" else "unavailable")
    _audit(context, services, request.action, {"approval_id": approval_id}, "ok" if decided else "error",
           outcome.answer, approval)  # fmt: skip
    if decided:
        return HttpAnswer(200, {"done": outcome.answer})
    if outcome.action in ("ignored", "not_allowed"):  # unknown, gone, or someone else's: the same answer
        return refusal(404, "There is no such approval request waiting for you.")
    return refusal(409, outcome.answer)


def _account(request: ActionRequest, context: ToolContext, services: AppServices) -> HttpAnswer:
    """Connect: a new sign-in, its URL for the page to open (`Telegram.WebApp.openLink`); Disconnect: the
    person's tokens revoked at the server (when it offers revocation) and forgotten."""
    from stepwise.accounts.flow import CannotConnect  # the OAuth flow (the MCP SDK's client): taps only

    access = services.accounts
    if access is None:
        return refusal(404, "Accounts at outside servers are not set up in this deployment.")
    name = request.target
    if not isinstance(name, str) or not name:
        return refusal(400, "malformed action: target must be a server's name")
    entry = access.server(name)
    if entry is None:
        return refusal(404, f"There is no server “{name}” to connect.")
    arguments = {"server": entry.name}
    if request.action == "account_disconnect":
        gone = access.flow().disconnect(context.user_id, entry.name)
        said = f"Disconnected {entry.name}." if gone else f"You have not connected {entry.name}."
        _audit(context, services, "disconnect_account", arguments, "ok" if gone else "error", said)
        return HttpAnswer(200, {"done": said}) if gone else refusal(404, said)
    try:
        started = access.flow().start_sign_in(context.user_id, entry, access.callback_url)
    except CannotConnect as problem:
        said = f"{entry.name}: can't connect ({problem})."
        _audit(context, services, "connect_account", arguments, "error", said)
        return refusal(502, said)
    said = f"Opening {entry.name}'s sign-in page: sign in there, then come back here."
    _audit(context, services, "connect_account", arguments, "ok", said)  # never the URL: it holds the state
    return HttpAnswer(200, {"done": said, "url": started.url})


def _voice(request: ActionRequest, context: ToolContext, services: AppServices) -> HttpAnswer:
    on = request.target
    if not isinstance(on, bool):
        return refusal(400, "malformed action: target must be true or false")
    if not services.voice_replies:
        return refusal(404, "Spoken replies are off in this deployment.")
    services.chats.set_voice_replies(context.scope.conversation, on)  # the private chat's own record
    said = f"Spoken answers are {'on' if on else 'off'}."
    _audit(context, services, "set_voice_replies", {"on": on}, "ok", said)
    return HttpAnswer(200, {"done": said})


def _audit(
    context: ToolContext,
    services: AppServices,
    action: str,
    arguments: dict[str, Any],
    outcome: Outcome,
    result: str,
    approval: Approval = "not_needed",
) -> None:
    record_call(services.audit, context, action, arguments, outcome, result, approval)
