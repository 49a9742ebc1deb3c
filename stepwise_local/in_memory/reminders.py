"""In-memory ReminderStore and Schedules for unit tests."""

from __future__ import annotations

from typing import TYPE_CHECKING

from stepwise.reminders.store import Profile

if TYPE_CHECKING:
    from stepwise.reminders.models import Reminder


class InMemoryReminderStore:
    """Reminders keyed by (user, number), counters, time zones and account marks in dicts."""

    def __init__(self) -> None:
        self.reminders: dict[tuple[int, int], Reminder] = {}
        self.counters: dict[int, int] = {}
        self.timezones: dict[int, str] = {}
        self.account_marks: dict[int, set[str]] = {}

    def allocate_id(self, user_id: int) -> int:
        self.counters[user_id] = self.counters.get(user_id, 0) + 1
        return self.counters[user_id]

    def put(self, reminder: Reminder) -> None:
        self.reminders[(reminder.user_id, reminder.reminder_id)] = reminder

    def get(self, user_id: int, reminder_id: int) -> Reminder | None:
        return self.reminders.get((user_id, reminder_id))

    def list(self, user_id: int) -> list[Reminder]:
        return [r for (u, _), r in sorted(self.reminders.items()) if u == user_id]

    def delete(self, user_id: int, reminder_id: int) -> None:
        self.reminders.pop((user_id, reminder_id), None)

    def timezone(self, user_id: int) -> str | None:
        return self.timezones.get(user_id)

    def set_timezone(self, user_id: int, name: str) -> None:
        self.timezones[user_id] = name

    def profile(self, user_id: int) -> Profile:
        return Profile(self.timezones.get(user_id), frozenset(self.account_marks.get(user_id, ())))

    def mark_account(self, user_id: int, server: str) -> None:
        self.account_marks.setdefault(user_id, set()).add(server)

    def unmark_account(self, user_id: int, server: str) -> None:
        self.account_marks.get(user_id, set()).discard(server)


class InMemorySchedules:
    """Schedules by name; `created` and `deleted` record every call."""

    def __init__(self) -> None:
        self.schedules: dict[str, Reminder] = {}
        self.created: list[str] = []
        self.deleted: list[str] = []

    def create(self, reminder: Reminder) -> None:
        self.created.append(reminder.schedule_name)
        self.schedules.setdefault(reminder.schedule_name, reminder)

    def delete(self, name: str) -> None:
        self.deleted.append(name)
        self.schedules.pop(name, None)
