"""The kind of a turn, decided once where the turn starts (LoadContext), and the one place where the reply of
every kind that needs no model is made: a reminder that fired, a background job's report, a slash command,
notices about files the model does not get, and the refusal once the daily token budget is spent. Every other
turn calls the model. (A background job's own execution starts in `states.job_turn`.)
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Literal

from stepwise.approvals.models import Requester
from stepwise.approvals.wording import asks
from stepwise.commands.answer import command_answer
from stepwise.commands.handlers import WithAppButton
from stepwise.commands.new_topic import OpensTopic
from stepwise.reminders.models import REMINDER_PREFIX
from stepwise.states.contracts.base import Next
from stepwise.turn.ids import iso_utc
from stepwise.turn_records.models import AppButton, ModelStep, NewToken, Reply
from stepwise.usage.budget import budget_message, is_over_budget

if TYPE_CHECKING:
    from collections.abc import Callable

    from stepwise.commands.handlers import ShownOnce, WithAppButton
    from stepwise.commands.new_topic import OpensTopic
    from stepwise.states.services import TurnServices
    from stepwise.turn_records.models import ReplySource, TurnMeta

logger = logging.getLogger(__name__)

TurnKind = Literal["reminder", "notice", "command", "budget", "outside_call", "job_report", "model"]
OUTSIDE_CALL_ID = "mcp_{message_id}"  # the tool_use id of an outside call in its turn


def decide_turn(meta: TurnMeta, services: TurnServices) -> tuple[TurnKind, Next]:
    """The turn's kind and where it goes: a kind that needs no model gets its reply now (route `reply`);
    an MCP client's call that waits for approval becomes the turn's tool call (route `tools_with_approval`:
    RunTools asks, runs it once approved and replies, `outside_call_reply`); a model turn goes to CallModel
    (route `model`)."""
    if meta.outside_call is not None:
        return "outside_call", _start_outside_call(meta, services)
    kind, text = _kind_and_text(meta, services)
    if text is None:
        return kind, Next(route="model")
    reply_without_model(meta, services, kind, text)
    return kind, Next(route="reply")


def _kind_and_text(
    meta: TurnMeta, services: TurnServices
) -> tuple[TurnKind, Callable[[str, str], str | ShownOnce | OpensTopic | WithAppButton] | None]:
    if meta.reminder is not None:
        reminder = meta.reminder
        return "reminder", lambda *_: REMINDER_PREFIX + reminder
    if meta.job_report is not None:  # a background job ended: its report, as it wrote it
        report = meta.job_report
        return "job_report", lambda *_: report
    if meta.notices_only:
        return "notice", lambda *_: "\n\n".join(meta.notices)
    if meta.command is not None:
        return "command", command_answer(meta, services)
    if meta.model_override is None and (used := _over_budget(meta, services)) is not None:
        now = services.clock()
        return "budget", lambda *_: budget_message(
            services.daily_token_budget, used, now, meta.timezone, meta.group_member
        )
    return "model", None


def _over_budget(meta: TurnMeta, services: TurnServices) -> int | None:
    """The user's tokens today when they reached DAILY_TOKEN_BUDGET (no model call then), else None."""
    if services.usage is None:
        return None
    used = is_over_budget(services.usage, meta.user_id, services.clock(), services.daily_token_budget)
    if used is not None:
        logger.info("daily token budget reached; no model call", extra={"used": used})
    return used


def reply_without_model(
    meta: TurnMeta,
    services: TurnServices,
    source: ReplySource,
    text: Callable[[str, str], str | ShownOnce | OpensTopic | WithAppButton],
) -> None:
    """Make `text(message_id, created_at)` the turn's only model step and its reply, which FinishTurn sends
    and stores like any reply. A `ShownOnce` text is sent with its new token (made by FinishTurn from the
    seed the reply keeps) and stored as its `kept` text (the step holds the kept text only); a
    `WithAppButton` text (/app) is sent with the button that opens the Mini App under its last chunk. A
    retry keeps the first attempt's reply, or, when it stopped before recording one, its step (message id,
    time and text) and computes the text once more only for what it shows once (a command is idempotent
    within its turn: /connect replaces the connection it made, whose token was never made)."""
    existing = services.turns.steps(meta.turn_id)
    if existing and services.turns.get_reply(meta.turn_id) is not None:
        return
    if existing:
        message_id, created_at = existing[0].message_id, existing[0].created_at
    else:
        message_id, created_at = services.new_id(), iso_utc(services.clock())
    answer = text(message_id, created_at)
    button = None
    if isinstance(answer, WithAppButton):  # /app: its text, with the button under it
        button = AppButton(text=answer.button, url=answer.url)
        answer = answer.text
    shown = None if isinstance(answer, str) else answer
    once, opens = _special(shown)
    if existing:
        step = existing[0]
    else:
        step = ModelStep(
            step=0,
            content=[{"type": "text", "text": answer if isinstance(answer, str) else answer.kept}],
            stop_reason="end_turn",
            model=source,
            message_id=message_id,
            created_at=created_at,
        )
        services.turns.put_step(meta.turn_id, step)
    services.turns.put_reply(
        meta.turn_id,
        Reply(
            text=shown.text if shown else step.text,
            kept_text=step.text if shown else None,
            new_token=NewToken(user_id=meta.user_id, connection=once.connection) if once else None,
            token_seed=once.seed if once else None,
            new_topic=opens.name if opens else None,
            new_topic_named=opens.named if opens else False,
            source=source,
            message_id=step.message_id,
            created_at=step.created_at,
            app_button=button,
        ),
    )


def _special(answer: ShownOnce | OpensTopic | None) -> tuple[ShownOnce | None, OpensTopic | None]:
    """A command's answer that is more than a text: one showing a new token (/connect <name>), or one opening
    a topic (/new)."""
    if answer is None:
        return None, None

    return (None, answer) if isinstance(answer, OpensTopic) else (answer, None)


def _start_outside_call(meta: TurnMeta, services: TurnServices) -> Next:
    """The outside call as the turn's step 0, a tool call like the model's (a retry keeps the first step)."""
    call = meta.outside_call
    assert call is not None
    if not services.turns.steps(meta.turn_id):
        message_id = services.new_id()
        services.turns.put_step(
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


def outside_call_reply(meta: TurnMeta, step: ModelStep, services: TurnServices) -> None:
    """The reply of an outside call's turn, once its call (`step`, the turn's only step) has its result: what
    the client asked and what came of it."""
    call = meta.outside_call
    assert call is not None
    result = step.tool_results[0]
    content = str(result.get("content", ""))
    outcome = f"Not done. {content}" if result.get("is_error") else f"Done. {content}"

    asked = asks(Requester(kind="mcp_client", name=call.connection), [call.description], asked=True)
    services.turns.put_reply(
        meta.turn_id,
        Reply(
            text=f"{asked} {outcome}",
            source="outside_call",
            message_id=step.message_id,
            created_at=step.created_at,
        ),
    )
