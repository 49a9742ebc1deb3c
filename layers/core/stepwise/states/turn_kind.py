"""The kind of a turn, decided once where the turn starts (LoadContext), and the one place where the reply of
every kind that needs no model is made: a reminder that fired, a background job's report, a slash command,
notices about files the model does not get, and the refusal once the daily token budget is spent. Every other
turn calls the model. (A background job's own execution starts in `states.job_turn`.)
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Literal

from stepwise.inbox.outside_call import OutsideCall
from stepwise.secretary.kinds import ContactWrote
from stepwise.states.contracts.base import Next
from stepwise.turn.ids import iso_utc
from stepwise.turn_records.models import (
    REMINDER_PREFIX,
    Chat,
    Checkin,
    Command,
    JobReport,
    JobRun,
    Reminder,
    Reply,
    RulesCommand,
    WithExtra,
)
from stepwise.usage.budget import budget_message, is_over_budget

if TYPE_CHECKING:
    from collections.abc import Callable

    from stepwise.services import TurnServices
    from stepwise.turn_records.models import ReplySource, TurnMeta

logger = logging.getLogger(__name__)

# What LoadContext decided for the turn (logged): an outcome, which is the turn's kind or, for a turn of the
# user's messages that needs no model, a notice or the budget's refusal.
Outcome = Literal["reminder", "notice", "command", "budget", "outside_call", "job_report", "model"]


def decide_turn(meta: TurnMeta, services: TurnServices, notices_only: bool = False) -> tuple[Outcome, Next]:
    """What the turn does and where it goes: a turn that needs no model gets its reply now (route `reply`);
    an MCP client's call that waits for approval becomes the turn's tool call (route `tools_with_approval`:
    RunTools asks, runs it once approved and replies, `outside_call_reply`); a model turn goes to CallModel
    (route `model`). `notices_only`: every message of the turn is a file the model does not get (the
    turn's notices answer it)."""
    kind = meta.kind
    match kind:
        case OutsideCall():
            from stepwise.states.outside_call import (
                start_outside_call,  # MCP clients' calls: loaded by theirs
            )

            return "outside_call", start_outside_call(meta, kind, services)
        case Reminder():
            return _canned(meta, services, "reminder", lambda *_: REMINDER_PREFIX + kind.text)
        case JobReport():  # a background job ended: its report, as it wrote it
            return _canned(meta, services, "job_report", lambda *_: kind.report)
        case _ if notices_only:
            return _canned(meta, services, "notice", lambda *_: "\n\n".join(meta.notices))
        case Command():
            # the commands' table: only a command's turn (LoadContext is on every first draft's way)
            from stepwise.commands.answer import command_answer

            return _canned(meta, services, "command", command_answer(meta, kind.text, services))
        case Chat() | Checkin() if (used := _over_budget(meta, services)) is not None:
            now = services.clock()
            return _canned(
                meta,
                services,
                "budget",
                lambda *_: budget_message(
                    services.settings.limits.daily_token_budget, used, now, meta.timezone, meta.scope.member
                ),
            )
        case ContactWrote() if _over_budget(meta, services) is not None:
            from stepwise.states.secretary_budget import (
                tell_owner_over_budget,  # secretary mode: its turns only
            )

            tell_owner_over_budget(meta, kind, services)
            return "budget", Next(route="reply")
        case Chat() | Checkin() | RulesCommand() | JobRun() | ContactWrote():
            return "model", Next(route="model")


def _canned(
    meta: TurnMeta,
    services: TurnServices,
    outcome: Outcome,
    text: Callable[[str, str], str | WithExtra],
) -> tuple[Outcome, Next]:
    """The turn's reply made without a model (its source is the outcome), sent by FinishTurn."""
    reply_without_model(meta, services, outcome, text)
    return outcome, Next(route="reply")


def _over_budget(meta: TurnMeta, services: TurnServices) -> int | None:
    """The user's tokens today when they reached DAILY_TOKEN_BUDGET (no model call then), else None."""
    if services.stores.usage is None:
        return None
    used = is_over_budget(
        services.stores.usage, meta.scope.payer, services.clock(), services.settings.limits.daily_token_budget
    )
    if used is not None:
        logger.info("daily token budget reached; no model call", extra={"used": used})
    return used


def reply_without_model(
    meta: TurnMeta,
    services: TurnServices,
    source: ReplySource,
    text: Callable[[str, str], str | WithExtra],
) -> None:
    """Make `text(message_id, created_at)` the turn's reply, which FinishTurn sends and stores like any
    reply (no model step: the reply is the whole answer), with its extra if it has one (a command's: a new
    token, a topic it opens, the Mini App's button). The reply is recorded in one write, after the text is
    computed: a retry finds it and answers nothing more (nor makes a second token); one that stopped before
    recording it computes the text again (a command is idempotent within its turn: /connect replaces the
    connection it made, whose token was never made)."""
    if services.stores.turns.get_reply(meta.turn_id) is not None:
        return
    message_id, created_at = services.new_id(), iso_utc(services.clock())
    answer = text(message_id, created_at)
    if isinstance(answer, str):  # stripped, as the history has always kept a canned answer
        shown, extra = answer.strip(), None
    else:
        shown, extra = answer.text, answer.extra
    services.stores.turns.put_reply(
        meta.turn_id,
        Reply(text=shown, source=source, message_id=message_id, created_at=created_at, extra=extra),
    )
