"""The ports: where reminders and each user's profile (time zone, account marks) are kept, and where their
schedules live."""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple, Protocol

if TYPE_CHECKING:
    from stepwise.reminders.models import Reminder


class Profile(NamedTuple):
    """What a turn reads of its person at its start, in one read: the time zone they set (None: not set) and
    the OAuth servers their accounts are marked at (`accounts`: a superset of the accounts kept, see
    docs/accounts.md; empty: their turns look up no account)."""

    timezone: str | None = None
    accounts: frozenset[str] = frozenset()


class ReminderStore(Protocol):
    """Reminders per user, and the user's profile. Implementations: DynamoDB, and in memory for tests."""

    def allocate_id(self, user_id: int) -> int:
        """The user's next reminder number (1, 2, ...; a number is never given twice)."""
        ...

    def put(self, reminder: Reminder) -> None:
        """Store (or store again, unchanged) a reminder."""
        ...

    def get(self, user_id: int, reminder_id: int) -> Reminder | None:
        """The user's reminder, or None (another user's number finds nothing)."""
        ...

    def list(self, user_id: int) -> list[Reminder]:
        """The user's reminders, by number."""
        ...

    def delete(self, user_id: int, reminder_id: int) -> None:
        """Delete the user's reminder (nothing when it is gone already)."""
        ...

    def timezone(self, user_id: int) -> str | None:
        """The IANA zone the user set, or None."""
        ...

    def set_timezone(self, user_id: int, name: str) -> None: ...

    def profile(self, user_id: int) -> Profile:
        """The user's time zone and account marks (one read)."""
        ...

    def mark_account(self, user_id: int, server: str) -> None:
        """Mark the user's profile as having an account at the server (before it is kept; safe to repeat)."""
        ...

    def unmark_account(self, user_id: int, server: str) -> None:
        """Take the server off the user's profile (after its account is forgotten; safe to repeat)."""
        ...


class Schedules(Protocol):
    """The reminders' schedules (EventBridge Scheduler). Both calls are safe to repeat."""

    def create(self, reminder: Reminder) -> None:
        """Create the reminder's schedule; one that exists already is left as it is."""
        ...

    def delete(self, name: str) -> None:
        """Delete a schedule by name; a missing one is no error."""
        ...
