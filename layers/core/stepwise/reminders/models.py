"""A reminder or check-in as stored, and the recurrences the tools accept."""

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from stepwise.approvals.models import Requester

Weekday = Literal["mon", "tue", "wed", "thu", "fri", "sat", "sun"]
WEEKDAYS: tuple[Weekday, ...] = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
MAX_REMINDER_ID = 2**31 - 1


class Reminder(BaseModel):
    """One reminder (a fixed text sent at its time) or check-in (an instruction run as a turn at its time).

    It belongs to `user_id` (a person, or in a group the group's chat id) and fires into `chat_id`.
    `expression` and `timezone` are the EventBridge Scheduler schedule's; `when` says it in words, in the
    user's zone.
    """

    model_config = ConfigDict(defer_build=True)

    user_id: int
    chat_id: int
    topic: int | None = None  # the topic where it was set: it fires there (None: the chat itself)
    account: int | None = None  # the owner whose business account the chat is in; None: a chat with the bot
    reminder_id: int = Field(ge=1, le=MAX_REMINDER_ID)
    text: str
    checkin: bool = False
    expression: str  # at(...), cron(...) or rate(...)
    timezone: str
    when: str
    one_time: bool
    task_id: int | None = None
    created_at: str
    created_by: Requester | None = None  # who set it; None: set before this was recorded
    # In a group (whose reminders belong to the group, `user_id` its chat id): the member who set it, whose
    # usage its check-in's turn counts against (docs/groups.md); None in a private chat
    member: int | None = None

    @property
    def schedule_name(self) -> str:
        """The schedule's name in the group: unique per reminder, at most 64 characters."""
        return self.name_of(self.user_id, self.reminder_id)

    @staticmethod
    def name_of(user_id: int, reminder_id: int) -> str:
        return f"u{user_id}-r{reminder_id}"


class FireEvent(BaseModel):
    """What a schedule sends its target when it fires (the Input, context attributes filled in)."""

    model_config = ConfigDict(defer_build=True, extra="ignore")

    user_id: int
    chat_id: int
    reminder_id: int = Field(ge=1, le=MAX_REMINDER_ID)
    scheduled_time: str = Field(min_length=1, max_length=40)
