"""A message waiting in a chat's inbox, and what enqueueing it found."""

from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from stepwise.history.forwarded import Forwarded
from stepwise.inbox.outside_call import OutsideCall
from stepwise.media.models import Attachment
from stepwise.telegram.conversation import Conversation

QueueStatus = Literal["queued", "taken"]
# message: typed by the user; reminder / checkin: put in the inbox by a schedule that fired (FireReminder);
# outside_call: a call of the user's MCP client that waits for the user's approval (the /mcp endpoint);
# job: the report of a background job that ended (stepwise.states.job_report).
MessageKind = Literal["message", "reminder", "checkin", "outside_call", "job"]
# new: first delivery; queued / taken: a retried delivery of a message still waiting / being answered;
# done: a retried delivery of a message already answered.
Admission = Literal["new", "queued", "taken", "done"]


@dataclass(frozen=True)
class NewLease:
    """A chat's lease taken for a new turn: the turn's name, and when the chat's previous turn started (epoch
    seconds; None for the chat's first), which tells how long the chat was quiet."""

    name: str
    previous_start: int | None = None


class JobEnded(BaseModel):
    """Which background job a `job` message reports on (its text is the report the chat gets)."""

    model_config = ConfigDict(defer_build=True)

    number: int = Field(ge=1)
    title: str
    status: str


class QueuedMessage(BaseModel):
    """A user's text message as the webhook received it (or a reminder that fired), until a turn has answered
    it. A reminder's `update_id` is derived from its schedule and fire time (`scheduled_update_id`), so a
    schedule delivered twice is one message."""

    model_config = ConfigDict(defer_build=True)

    chat_id: int
    topic: int | None = None  # the topic's message_thread_id; None: the chat itself
    update_id: int = Field(ge=0)
    user_id: int
    id: str = Field(min_length=1)  # the stored message's id (ids.new_id), fixed at receipt
    text: str  # the text, or a photo's or document's caption
    sender: str | None = None  # in a group: the member's first name, which the model sees (docs/groups.md)
    chat_title: str | None = None  # in a group: its title, kept on the chat's record (the Mini App shows it)
    attachment: Attachment | None = None  # a photo, document, voice note...
    forwarded: Forwarded | None = None  # a forwarded message's origin
    received_at: str  # ISO 8601 UTC, when the webhook received it
    telegram_message_id: int | None = None
    kind: MessageKind = "message"
    reminder_id: int | None = None
    outside_call: OutsideCall | None = None
    job: JobEnded | None = None
    status: QueueStatus = "queued"
    turn_id: str | None = None  # the turn answering it, once taken
    claimed_at: str | None = None  # its place in the history, fixed when taken
    requeues: int = Field(default=0, ge=0)  # how often a failed turn gave it back

    @property
    def conversation(self) -> Conversation:
        """The conversation whose inbox keeps it."""
        return Conversation.of(self.chat_id, self.topic)


def turn_name(conversation: int, generation: int, update_id: int) -> str:
    """The execution name of the conversation's n-th turn, started for the waiting message `update_id`:
    unique (a retried start never starts it twice) and at most 69 characters for Telegram's largest ids
    (`chat<id>-turn…` in a chat itself, as before topics; `chat<id>t<topic>-turn…` in a topic)."""
    return f"chat{Conversation(conversation).label()}-turn{generation}-update{update_id}"


# Telegram's update ids are far below this; ids from here up belong to reminders that fired.
SCHEDULED_BASE = 10**19


def scheduled_update_id(fired_at_epoch: int, user_id: int, reminder_id: int) -> int:
    """The inbox id of one firing of a reminder: after every Telegram update (a reminder is answered after
    what the user sent before it fired), the same for a repeated delivery of that firing, and distinct for
    two reminders firing in one chat at the same second (unless both their user ids and numbers agree in the
    last four digits)."""
    return SCHEDULED_BASE + fired_at_epoch * 10**8 + (user_id % 10**4) * 10**4 + reminder_id % 10**4


def outside_update_id(received_epoch: int, nonce: int) -> int:
    """The inbox id of an outside call: past every Telegram update, like a reminder's (and distinct from any
    reminder's but by a one-in-10^8 chance), ordered by arrival to the second; `nonce` (random, below 10^8)
    tells apart the calls of one second."""
    return SCHEDULED_BASE + received_epoch * 10**8 + nonce % 10**8
