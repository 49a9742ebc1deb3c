"""The reminder tools: set, list and cancel reminders and check-ins, and set the user's time zone.

A reminder is a record (DynamoDB) and a schedule (EventBridge Scheduler), which cannot be written in one
transaction. So `set_reminder` and `cancel_reminder` declare an `intent`: the registry records the result
(and, for a new reminder, the whole reminder as the intent's `ref`) before the effect, and the effect is safe
to repeat: a retried call creates the same schedule (an existing one is kept) and stores the same record. The
schedule is created before the record and deleted after it, so a crash in between leaves at most a schedule
without a record, which FireReminder deletes when it fires (never a record that would not fire).

`list_reminders` also returns its result as data (a `ReminderList`).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from functools import partial
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, model_validator

from stepwise.approvals.arguments import worded
from stepwise.approvals.models import Requester
from stepwise.approvals.wording import set_by
from stepwise.reminders.models import MAX_REMINDER_ID, Reminder, Weekday
from stepwise.reminders.next_firing import next_firing
from stepwise.reminders.timing import (
    MAX_DELAY_MINUTES,
    Timing,
    TimingError,
    describe_moment,
    every,
    interval_minutes,
    local_now,
    once_at,
    once_in,
    weekly,
    zone,
)
from stepwise.tools.registry import Intent, Tool, ToolContext, ToolError, ToolOutput

if TYPE_CHECKING:
    from zoneinfo import ZoneInfo

    from stepwise.reminders.store import ReminderStore, Schedules
    from stepwise.tasks.repository import TaskRepository

MAX_TEXT = 500


@dataclass(frozen=True)
class ReminderLimits:
    """The deployment's limits (docs/reminders.md)."""

    default_timezone: str = "UTC"
    max_reminders: int = 100
    min_checkin_interval_minutes: int = 60
    min_repeat_interval_minutes: int = 15


@dataclass(frozen=True)
class ReminderSetup:
    """What the reminder tools are bound to."""

    reminders: ReminderStore
    schedules: Schedules
    limits: ReminderLimits


class _Input(BaseModel):
    model_config = ConfigDict(defer_build=True, extra="forbid")


class Repeat(_Input):
    days: list[Weekday] | None = Field(
        default=None, max_length=7, description="Weekdays to fire on; [] or omitted means every day."
    )
    time: str | None = Field(default=None, max_length=5, description="Local time of day, HH:MM.")
    every_minutes: int | None = Field(
        default=None, ge=1, le=MAX_DELAY_MINUTES, description="Or: fire every this many minutes."
    )

    @model_validator(mode="after")
    def _one_kind(self) -> Repeat:
        if (self.time is None) == (self.every_minutes is None):
            raise ValueError("give either a time of day (with optional days) or every_minutes")
        if self.every_minutes is not None and self.days:
            raise ValueError("days go with a time of day, not with every_minutes")
        return self


class SetReminderInput(_Input):
    text: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=MAX_TEXT)] = Field(
        description="What to remind the user of; for a check-in, the instruction to carry out at each time."
    )
    checkin: bool = Field(
        default=False,
        description="True: at each time, run the text as an instruction (tools included), send the answer.",
    )
    at: str | None = Field(
        default=None, max_length=40, description="Once, at this local date-time (YYYY-MM-DDTHH:MM)."
    )
    in_minutes: int | None = Field(
        default=None, ge=1, le=MAX_DELAY_MINUTES, description="Once, after a delay."
    )
    repeat: Repeat | None = Field(default=None, description="Recurring: days and a time, or every_minutes.")
    task_id: int | None = Field(
        default=None, ge=1, le=2**31 - 1, description="The task this reminder is about, if any."
    )

    @model_validator(mode="after")
    def _one_time_given(self) -> SetReminderInput:
        given = [name for name in ("at", "in_minutes", "repeat") if getattr(self, name) is not None]
        if len(given) != 1:
            raise ValueError("give exactly one of at, in_minutes or repeat")
        return self


class NoInput(_Input):
    pass


class CancelReminderInput(_Input):
    reminder_id: int = Field(
        strict=True,
        description="The reminder's number, as list_reminders shows it (#2 is 2).",
        json_schema_extra={"minimum": 1, "maximum": MAX_REMINDER_ID},
    )


class SetTimezoneInput(_Input):
    timezone: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=64)] = Field(
        description="An IANA time zone name, e.g. Europe/Lisbon or America/New_York."
    )


class ReminderView(BaseModel):
    """One of the user's reminders or check-ins; `when` says its time in words, in `timezone`; `next_at` is
    its next time there (ISO 8601 with the zone's offset; None when it will not fire again)."""

    model_config = ConfigDict(defer_build=True)

    reminder_id: int
    text: str
    checkin: bool
    when: str
    timezone: str
    one_time: bool
    task_id: int | None
    created_at: str
    created_by: Requester | None = None  # who set it (None: set before this was recorded)
    next_at: str | None = None

    @classmethod
    def of(cls, reminder: Reminder, now: datetime | None = None) -> ReminderView:
        view = cls.model_validate(reminder.model_dump(include=set(cls.model_fields)))
        if now is not None:
            moment = next_firing(reminder.expression, reminder.timezone, reminder.created_at, now)
            view.next_at = moment.isoformat(timespec="minutes") if moment is not None else None
        return view


class ReminderList(BaseModel):
    """The user's reminders and check-ins."""

    model_config = ConfigDict(defer_build=True)

    reminders: list[ReminderView]


def user_zone_name(setup: ReminderSetup, user_id: int) -> str:
    """The name of the user's zone, or of the deployment's default until they set one."""
    return setup.reminders.timezone(user_id) or setup.limits.default_timezone


def user_zone(reminders: ReminderStore, limits: ReminderLimits, user_id: int) -> ZoneInfo:
    """The user's zone, or the deployment's default until they set one."""
    return zone(reminders.timezone(user_id) or limits.default_timezone)


def _now(context: ToolContext) -> datetime:
    return datetime.fromisoformat(context.now.replace("Z", "+00:00"))


def _timing(args: SetReminderInput, tz: ZoneInfo, now: datetime, limits: ReminderLimits) -> Timing:
    if args.at is not None:
        return once_at(args.at, tz, now)
    if args.in_minutes is not None:
        return once_in(args.in_minutes, tz, now)
    assert args.repeat is not None
    if args.repeat.every_minutes is not None:
        minimum = _shortest_interval(args, limits)
        return every(
            args.repeat.every_minutes, minimum, "a check-in" if args.checkin else "a repeating reminder"
        )
    return weekly(args.repeat.days or [], args.repeat.time or "", tz)


def _shortest_interval(args: SetReminderInput, limits: ReminderLimits) -> int:
    """The shortest interval between two firings: MIN_REPEAT_INTERVAL_MINUTES for any repeat, and for a
    check-in MIN_CHECKIN_INTERVAL_MINUTES (which config keeps no shorter)."""
    if args.checkin:
        return max(limits.min_checkin_interval_minutes, limits.min_repeat_interval_minutes)
    return limits.min_repeat_interval_minutes


def _checked(
    reminders: ReminderStore,
    tasks: TaskRepository,
    limits: ReminderLimits,
    context: ToolContext,
    args: SetReminderInput,
) -> tuple[Timing, ZoneInfo]:
    """The reminder's timing and zone once every limit is checked; ToolError with the reason otherwise."""
    try:
        tz = user_zone(reminders, limits, context.user_id)
        timing = _timing(args, tz, _now(context), limits)
    except TimingError as error:
        raise ToolError(str(error)) from None
    shortest = _shortest_interval(args, limits)
    if not timing.one_time and interval_minutes(timing) < shortest:
        what = "check-ins run" if args.checkin else "repeating reminders run"
        raise ToolError(f"That is too often: {what} at most every {shortest} minutes.")
    if args.task_id is not None and tasks.get(context.owner, args.task_id) is None:
        raise ToolError(f"There is no task #{args.task_id} on the user's list.")
    if len(reminders.list(context.owner)) >= limits.max_reminders:
        raise ToolError(f"The user has {limits.max_reminders} reminders, the most allowed; cancel one first.")
    return timing, tz


def describe_set_reminder(
    reminders: ReminderStore,
    tasks: TaskRepository,
    limits: ReminderLimits,
    context: ToolContext,
    args: SetReminderInput,
    room: int,
) -> str:
    """What a check-in's approval shows: when it runs and its whole instruction, shortened only to fit `room`
    (checked first: a call that cannot succeed fails at once instead of asking)."""
    timing, _tz = _checked(reminders, tasks, limits, context, args)
    kind = "check-in" if args.checkin else "reminder"
    task = f" (task #{args.task_id})" if args.task_id is not None else ""
    return worded(f"Set a {kind} {timing.when}{task}: “{{}}”.", [args.text], room)


def set_reminder_intent(
    reminders: ReminderStore,
    tasks: TaskRepository,
    limits: ReminderLimits,
    context: ToolContext,
    args: SetReminderInput,
) -> Intent:
    """Check everything, then number the reminder; the intent carries the whole reminder, and who set it."""
    timing, tz = _checked(reminders, tasks, limits, context, args)
    reminder = Reminder(
        user_id=context.owner,
        chat_id=context.scope.conversation.chat_id,
        topic=context.scope.conversation.topic,
        account=context.scope.conversation.account,
        reminder_id=reminders.allocate_id(context.owner),
        text=args.text,
        checkin=args.checkin,
        expression=timing.expression,
        timezone=tz.key,
        when=timing.when,
        one_time=timing.one_time,
        task_id=args.task_id,
        created_at=context.now,
        created_by=context.requester,
        member=context.user_id if context.scope.in_group else None,
    )
    kind = "Check-in" if args.checkin else "Reminder"
    return Intent(
        f"{kind} #{reminder.reminder_id} set {timing.when}: {args.text}", ref=reminder.model_dump_json()
    )


def set_reminder(
    reminders: ReminderStore, schedules: Schedules, context: ToolContext, args: SetReminderInput
) -> str:
    assert context.recorded is not None  # the registry recorded the intent
    reminder = Reminder.model_validate_json(context.recorded.ref)
    schedules.create(reminder)
    reminders.put(reminder)
    return context.recorded.result


def list_reminders(reminders: ReminderStore, context: ToolContext, args: NoInput) -> ToolOutput[ReminderList]:
    found = reminders.list(context.owner)
    data = ReminderList(reminders=[ReminderView.of(reminder, _now(context)) for reminder in found])
    if not found:
        return ToolOutput("No reminders.", data)
    lines = "\n".join(reminder_line(r) for r in found)
    return ToolOutput(f"{len(found)} reminder{'s' if len(found) != 1 else ''}:\n{lines}", data)


def cancel_reminder_intent(
    reminders: ReminderStore, context: ToolContext, args: CancelReminderInput
) -> Intent:
    reminder = reminders.get(context.owner, args.reminder_id)
    if reminder is None:
        raise ToolError(f"There is no reminder #{args.reminder_id} for this user.")
    return Intent(f"Cancelled reminder #{reminder.reminder_id}: {reminder.text}")


def cancel_reminder(
    reminders: ReminderStore, schedules: Schedules, context: ToolContext, args: CancelReminderInput
) -> str:
    reminders.delete(context.owner, args.reminder_id)
    schedules.delete(Reminder.name_of(context.owner, args.reminder_id))
    return "cancelled"


def set_timezone(reminders: ReminderStore, context: ToolContext, args: SetTimezoneInput) -> str:
    try:
        tz = zone(args.timezone)
    except TimingError as error:
        raise ToolError(str(error)) from None
    reminders.set_timezone(context.user_id, tz.key)
    return f"Time zone set to {tz.key}: it is now {describe_moment(local_now(_now(context), tz))} there."


def _is_checkin(args: SetReminderInput) -> bool:
    """A check-in runs model turns (tools included) later, unattended: setting one asks for the tap."""
    return args.checkin


def reminder_tools(setup: ReminderSetup, tasks: TaskRepository) -> list[Tool[Any]]:
    """The reminder tools, bound to the reminder store, the schedules and (for task links) the tasks."""
    reminders, schedules, limits = setup.reminders, setup.schedules, setup.limits
    return [
        Tool(
            "set_reminder",
            "Remind the user at a time (once, after a delay, or recurring, in their time zone), or set a "
            "check-in: an instruction run at each time, whose answer is sent to the chat. A check-in waits "
            "for the user's approval before it is set.",
            SetReminderInput,
            partial(set_reminder, reminders, schedules),
            writes=True,
            intent=partial(set_reminder_intent, reminders, tasks, limits),
            describe=partial(describe_set_reminder, reminders, tasks, limits),
            approval_when=_is_checkin,
        ),
        Tool(
            "list_reminders",
            "List the user's reminders and check-ins with their numbers and times.",
            NoInput,
            partial(list_reminders, reminders),
            read_only=True,
            output_model=ReminderList,
        ),
        Tool(
            "cancel_reminder",
            "Cancel one of the user's reminders or check-ins, by number.",
            CancelReminderInput,
            partial(cancel_reminder, reminders, schedules),
            writes=True,
            intent=partial(cancel_reminder_intent, reminders),
            destructive=True,
            idempotent=True,
        ),
        Tool(
            "set_timezone",
            "Set the user's time zone (an IANA name); times and reminders use it from then on.",
            SetTimezoneInput,
            partial(set_timezone, reminders),
            idempotent=True,  # not destructive: it replaces one setting, which the user can set back
        ),
    ]


def reminder_line(reminder: Reminder) -> str:
    """How list_reminders (and /reminders) shows a reminder, with who set it when that is known."""
    kind = "check-in" if reminder.checkin else "reminder"
    task = f" (task #{reminder.task_id})" if reminder.task_id else ""
    origin = f" [{set_by(reminder.created_by)}]" if reminder.created_by is not None else ""
    return f"#{reminder.reminder_id} {kind} {reminder.when}: {reminder.text}{task}{origin}"
