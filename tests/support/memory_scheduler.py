"""Reminders' schedules fired on the in-memory stack's clock: the twin of the emulation's local EventBridge
Scheduler (`stepwise_local.scheduler`) over the in-memory `Schedules` (`stepwise_local.in_memory.reminders`),
for behaviour tests.

Each pass (`fire_due`) works out which schedules are due at the clock's now, as the local scheduler does, and
hands each occurrence to FireReminder's core (`stepwise.reminders.firing.fire`) with the event the schedule's
target Input makes (`fire_input`, `<aws.scheduler.scheduled-time>` filled in):

- a one-time schedule (`at(...)`) fires once when its time has come, then deletes itself (its
  ActionAfterCompletion is DELETE);
- a recurring one (`cron(...)`, `rate(...)`) fires each occurrence once, counted from the reminder's creation;
  when several went by since the last pass (the clock jumped), only the most recent fires;
- `redeliver` hands an occurrence to FireReminder again, unchanged (Scheduler delivers at least once).

It leaves to the emulated stack: the Scheduler API itself (moto), the FireReminder Lambda handler, a failing
target's retries, disabled schedules, and start and end dates (the tools set none).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from stepwise.reminders.eventbridge import fire_input
from stepwise.reminders.firing import FireOutcome, FireServices, fire
from stepwise.reminders.models import FireEvent, Reminder
from stepwise_local import schedule_expression
from stepwise_local.in_memory.reminders import InMemorySchedules
from stepwise_local.scheduler import EARLIEST, scheduled_time_text

_INSTANT = timedelta(microseconds=1)


@dataclass(frozen=True)
class Firing:
    """One delivery of a schedule's occurrence to FireReminder, and what FireReminder did with it."""

    name: str
    scheduled_time: datetime
    event: FireEvent
    outcome: FireOutcome


class MemoryScheduler:
    """Fires the due schedules of `schedules` through FireReminder's core, on `clock`."""

    def __init__(
        self, schedules: InMemorySchedules, services: FireServices, clock: Callable[[], datetime]
    ) -> None:
        self._schedules = schedules
        self._services = services
        self._clock = clock
        self._scanned_to: dict[str, datetime] = {}  # a recurring schedule's occurrences up to here went by
        self.fired: list[Firing] = []

    def fire_due(self) -> list[Firing]:
        """One pass: fire every schedule due now; returns the deliveries."""
        now = self._clock()
        firings = []
        for name, reminder in list(self._schedules.schedules.items()):
            occurrence = self._due(name, reminder, now)
            if occurrence is None:
                continue
            if reminder.one_time:  # ActionAfterCompletion DELETE
                self._schedules.schedules.pop(name, None)
            when = scheduled_time_text(occurrence)
            event = FireEvent.model_validate_json(
                fire_input(reminder).replace("<aws.scheduler.scheduled-time>", when)
            )
            firings.append(self._deliver(name, occurrence, event))
        return firings

    def redeliver(self, firing: Firing) -> Firing:
        """Deliver the same occurrence again."""
        return self._deliver(firing.name, firing.scheduled_time, firing.event)

    def _deliver(self, name: str, scheduled_time: datetime, event: FireEvent) -> Firing:
        firing = Firing(name, scheduled_time, event, fire(event, self._services))
        self.fired.append(firing)
        return firing

    def _due(self, name: str, reminder: Reminder, now: datetime) -> datetime | None:
        expression = schedule_expression.parse(reminder.expression, reminder.timezone)
        if expression.one_time:
            return expression.latest(EARLIEST, now, now)
        created = _second(datetime.fromisoformat(reminder.created_at.replace("Z", "+00:00")))
        after = self._scanned_to.get(name, created - _INSTANT)
        self._scanned_to[name] = max(after, now)
        return expression.latest(after, now, created) if now > after else None


def schedule_of(reminder: Reminder) -> dict[str, str]:
    """What EventBridge Scheduler would hold of a reminder's schedule (`EventBridgeSchedules.create`)."""
    return {
        "Name": reminder.schedule_name,
        "ScheduleExpression": reminder.expression,
        "ScheduleExpressionTimezone": reminder.timezone,
        "ActionAfterCompletion": "DELETE" if reminder.one_time else "NONE",
    }


def _second(moment: datetime) -> datetime:
    """Scheduler's times are whole seconds (and UTC)."""
    return moment.astimezone(UTC).replace(microsecond=0)
