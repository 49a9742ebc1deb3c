"""A message waiting in a chat's inbox, and what enqueueing it found."""

from typing import Annotated, Any, Literal, NamedTuple

from pydantic import BaseModel, ConfigDict, Field, model_validator

from stepwise.history.forwarded import Forwarded
from stepwise.inbox.outside_call import OutsideCall
from stepwise.media.models import Attachment
from stepwise.secretary.kinds import ContactWrote
from stepwise.telegram.conversation import Conversation, Scope

QueueStatus = Literal["queued", "taken"]
# What enqueueing a message found in its inbox. new: its first delivery; queued / taken: a retried delivery of
# a message still waiting / being answered; done: a retried delivery of a message already answered.
Enqueued = Literal["new", "queued", "taken", "done"]


class NewLease(NamedTuple):
    """A chat's lease taken for a new turn: the turn's name, and when the chat's previous turn started (epoch
    seconds; None for the chat's first), which tells how long the chat was quiet."""

    name: str
    previous_start: int | None = None


class Typed(BaseModel):
    """A message the user sent (a text, photo, document, voice note...)."""

    model_config = ConfigDict(defer_build=True)

    kind: Literal["message"] = "message"


class Fired(BaseModel):
    """A reminder or check-in whose schedule fired (FireReminder); its text is the reminder's."""

    model_config = ConfigDict(defer_build=True)

    kind: Literal["reminder", "checkin"]
    reminder_id: int | None = None


class JobEnded(BaseModel):
    """The report of a background job that ended (`stepwise.states.job_report`): which job (the message's
    text is the report the chat gets)."""

    model_config = ConfigDict(defer_build=True)

    kind: Literal["job"] = "job"
    number: int = Field(ge=1)
    title: str
    status: str


# What put a message in the inbox: the user, a schedule that fired, a call of the user's MCP client that waits
# for the user's approval (the /mcp endpoint), a background job that ended, or a contact writing to an owner's
# business account (secretary mode).
MessageKind = Annotated[Typed | Fired | OutsideCall | JobEnded | ContactWrote, Field(discriminator="kind")]


class QueuedMessage(BaseModel):
    """A user's text message as the webhook received it (or a reminder that fired), until a turn has answered
    it. A reminder's `update_id` is derived from its schedule and fire time (`scheduled_update_id`), so a
    schedule delivered twice is one message."""

    model_config = ConfigDict(defer_build=True)

    chat_id: int
    topic: int | None = None  # the topic's message_thread_id; None: the chat itself
    account: int | None = None  # the owner whose business account the chat is in; None: a chat with the bot
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
    kind: MessageKind = Field(default_factory=Typed)
    status: QueueStatus = "queued"
    turn_id: str | None = None  # the turn answering it, once taken
    claimed_at: str | None = None  # its place in the history, fixed when taken
    requeues: int = Field(default=0, ge=0)  # how often a failed turn gave it back

    @model_validator(mode="before")
    @classmethod
    def _fold_stored_kind(cls, data: Any) -> Any:
        """A message queued before issue 40 kept its kind as a name, with `reminder_id`, `outside_call` or
        `job` beside it (it may wait in the inbox for days): it reads as the same kind."""
        if not isinstance(data, dict) or not isinstance(data.get("kind", "message"), str):
            return data
        flat = {key: data[key] for key in ("reminder_id", "outside_call", "job") if key in data}
        data = {key: value for key, value in data.items() if key not in flat}
        match data.get("kind", "message"):
            case "reminder" | "checkin" as name:
                data["kind"] = {"kind": name, "reminder_id": flat.get("reminder_id")}
            case "outside_call":
                data["kind"] = {**flat["outside_call"], "kind": "outside_call"}
            case "job":
                data["kind"] = {**flat["job"], "kind": "job"}
            case "message":
                data["kind"] = {"kind": "message"}
        return data

    @property
    def conversation(self) -> Conversation:
        """The conversation whose inbox keeps it."""
        return Conversation(self.chat_id, self.topic, self.account)

    @property
    def scope(self) -> Scope:
        """Whose the message is, as whoever queued it decided (the turn that answers it carries it on)."""
        return Scope(self.conversation, self.user_id, self.sender)

    @property
    def typed(self) -> bool:
        """Whether the user sent it (not a schedule, an MCP client, a job or a contact)."""
        return isinstance(self.kind, Typed)

    @property
    def written(self) -> bool:
        """Whether a person wrote it: the user, or a contact in an owner's business account (a burst of
        these folds into one turn)."""
        return isinstance(self.kind, Typed | ContactWrote)


def turn_name(conversation: Conversation, generation: int, update_id: int) -> str:
    """The execution name of the conversation's n-th turn, started for the waiting message `update_id`:
    unique (a retried start never starts it twice) and at most 69 characters for Telegram's largest ids
    (`chat<id>-turn…` in a chat itself, as before topics; `chat<id>t<topic>-turn…` in a topic), 77 for the
    largest ids `Conversation` takes (`chat<id>b<owner>-turn…` in a contact's chat in a business account)."""
    return f"chat{conversation.label()}-turn{generation}-update{update_id}"


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
