"""What happens when a reminder's schedule fires: it becomes a message in the chat's inbox, answered in turn.

A reminder is answered with its text (no model call); a check-in's instruction runs as a full turn. The
inbox id comes from the schedule and the occurrence (`scheduled_update_id`), so Scheduler's at-least-once
delivery gives one message; a cancelled reminder (no record) gives none and its schedule is deleted.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Literal

from stepwise.inbox.models import Fired, QueuedMessage, scheduled_update_id
from stepwise.reminders.models import Reminder
from stepwise.telegram.conversation import Conversation, Scope
from stepwise.turn.ids import iso_utc, new_id, utc_now

if TYPE_CHECKING:
    from collections.abc import Callable

    from stepwise.chats.store import ChatStore
    from stepwise.inbox.sequencer import Sequencer
    from stepwise.reminders.models import FireEvent
    from stepwise.reminders.store import ReminderStore, Schedules

logger = logging.getLogger(__name__)

FireOutcome = Literal["started", "queued", "duplicate", "cancelled", "paused"]


@dataclass
class FireServices:
    """What FireReminder needs: the reminders, their schedules, the chat records and the sequencer."""

    reminders: ReminderStore
    schedules: Schedules
    chats: ChatStore
    sequencer: Callable[[], Sequencer]
    checkin_idle_days: int = 2
    clock: Callable[[], datetime] = utc_now
    new_id: Callable[[], str] = field(default=new_id)


def fire(event: FireEvent, services: FireServices) -> FireOutcome:
    """Queue the reminder's message for its chat (see the module docstring); says what was done."""
    reminder = services.reminders.get(event.user_id, event.reminder_id)
    if reminder is None:
        # cancelled, or a schedule a crash left without its record
        services.schedules.delete(Reminder.name_of(event.user_id, event.reminder_id))
        logger.info("no such reminder: nothing sent", extra={"reminder_id": event.reminder_id})
        return "cancelled"
    now = services.clock()
    if reminder.checkin and not reminder.one_time and _idle(reminder, services, now):
        logger.info(
            "check-in paused: the user has not written lately", extra={"reminder_id": event.reminder_id}
        )
        return "paused"
    fired_at = _fired_at(event.scheduled_time, now)
    # in a group, the member who set it speaks (`user_id` is then the group: whose reminder it is)
    scope = Scope(
        reminder_conversation(reminder), reminder.member if reminder.member is not None else reminder.user_id
    )
    message = QueuedMessage(
        chat_id=scope.conversation.chat_id,
        topic=scope.conversation.topic,
        account=scope.conversation.account,
        update_id=scheduled_update_id(int(fired_at.timestamp()), reminder.user_id, reminder.reminder_id),
        user_id=scope.user_id,
        id=services.new_id(),
        text=reminder.text,
        received_at=iso_utc(now),
        kind=Fired(kind="checkin" if reminder.checkin else "reminder", reminder_id=reminder.reminder_id),
    )
    admitted = services.sequencer().admit(message)
    if reminder.one_time:  # its schedule deletes itself; a fired one-time reminder is no longer listed
        services.reminders.delete(reminder.user_id, reminder.reminder_id)
    logger.info(
        "reminder fired",
        extra={"reminder_id": reminder.reminder_id, "chat_id": reminder.chat_id, "admitted": admitted},
    )
    return admitted


def reminder_conversation(reminder: Reminder) -> Conversation:
    """Where the reminder fires: the topic where it was set, or the chat itself."""
    return Conversation(reminder.chat_id, reminder.topic, reminder.account)


def _idle(reminder: Reminder, services: FireServices, now: datetime) -> bool:
    """True when the user has not written in the chat for `checkin_idle_days` (model-driven check-ins wait
    for them: they resume by themselves once the user writes again)."""
    chat = services.chats.get(reminder_conversation(reminder))
    if chat is None or not chat.last_user_at:
        return True
    last = datetime.fromisoformat(chat.last_user_at.replace("Z", "+00:00"))
    return now - last > timedelta(days=services.checkin_idle_days)


def _fired_at(scheduled_time: str, now: datetime) -> datetime:
    """The occurrence's time as Scheduler gives it (ISO 8601); the current time if it is unreadable."""
    try:
        moment = datetime.fromisoformat(scheduled_time.replace("Z", "+00:00"))
    except ValueError:
        logger.warning("unreadable scheduled time", extra={"scheduled_time": scheduled_time})
        return now.replace(second=0, microsecond=0)
    return moment if moment.tzinfo else moment.replace(tzinfo=now.tzinfo)
