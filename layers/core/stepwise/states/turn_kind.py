"""The kind of a turn, decided once where the turn starts (LoadContext), and the one place where the reply of
every kind that needs no model is made: a reminder that fired, a slash command, notices about files the
model does not get, and the refusal once the daily token budget is spent. Every other turn calls the model.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from aws_lambda_powertools import Logger

from stepwise.ids import iso_utc
from stepwise.reminders.models import REMINDER_PREFIX
from stepwise.states.contracts import Next
from stepwise.turn_records.models import ModelStep, Reply
from stepwise.usage.budget import budget_message, is_over_budget

if TYPE_CHECKING:
    from collections.abc import Callable

    from stepwise.states.services import TurnServices
    from stepwise.turn_records.models import ReplySource, TurnMeta

logger = Logger(child=True)

TurnKind = Literal["reminder", "notice", "command", "budget", "model"]


def decide_turn(meta: TurnMeta, services: TurnServices) -> tuple[TurnKind, Next]:
    """The turn's kind and where it goes: a kind that needs no model gets its reply now (route `reply`);
    a model turn goes to CallModel (route `model`)."""
    kind, text = _kind_and_text(meta, services)
    if text is None:
        return kind, Next(route="model")
    reply_without_model(meta, services, kind, text)
    return kind, Next(route="reply")


def _kind_and_text(
    meta: TurnMeta, services: TurnServices
) -> tuple[TurnKind, Callable[[str, str], str] | None]:
    if meta.reminder is not None:
        reminder = meta.reminder
        return "reminder", lambda *_: REMINDER_PREFIX + reminder
    if meta.notices_only:
        return "notice", lambda *_: "\n\n".join(meta.notices)
    if meta.command is not None:
        from stepwise.commands.answer import command_answer

        return "command", command_answer(meta, services)
    if meta.model_override is None and (used := _over_budget(meta, services)) is not None:
        now = services.clock()
        return "budget", lambda *_: budget_message(services.daily_token_budget, used, now, meta.timezone)
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
    meta: TurnMeta, services: TurnServices, source: ReplySource, text: Callable[[str, str], str]
) -> None:
    """Make `text(message_id, created_at)` the turn's only model step and its reply, which FinishTurn sends
    and stores like any reply. A retry keeps the first attempt's step (its text, message id and time) and
    does not compute the text again."""
    existing = services.turns.steps(meta.turn_id)
    if existing:
        step = existing[0]
    else:
        message_id, created_at = services.new_id(), iso_utc(services.clock())
        step = ModelStep(
            step=0,
            content=[{"type": "text", "text": text(message_id, created_at)}],
            stop_reason="end_turn",
            model=source,
            message_id=message_id,
            created_at=created_at,
        )
        services.turns.put_step(meta.turn_id, step)
    services.turns.put_reply(
        meta.turn_id,
        Reply(text=step.text, source=source, message_id=step.message_id, created_at=step.created_at),
    )
