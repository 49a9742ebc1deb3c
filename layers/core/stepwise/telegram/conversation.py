"""Whose a turn is: the conversation it answers (a chat, or one topic of it, docs/topics.md; or a contact's
chat in an owner's Telegram Business account) and its `Scope` (who speaks, and whose data the turn reads and
writes; docs/groups.md).

A message belongs to topic N when it has `message_thread_id` N and `is_topic_message` true; otherwise to the
chat itself (in ordinary groups, replies carry a thread id without being in a topic; a forum's General topic,
id 1, is the chat itself). A `business_message` (issue 42) is in the private chat of a contact with an owner
who connected the bot to their account: its `chat.id` is the contact's, the same number as the contact's own
private chat with the bot (and as their chat in another owner's account), so that conversation is named by the
owner too (`account`). A conversation has its own inbox and lease, history, summary and turns. The number the
tables key a conversation by is the DynamoDB adapters' business (`stepwise.aws.conversation_key`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from stepwise.telegram.models import Message

GENERAL_TOPIC = 1  # a forum's General topic: the chat itself; Telegram refuses it as a message_thread_id
MAX_TOPIC = 2**31 - 1  # topic ids are message ids
MAX_CHAT = 2**53 - 1


class _ConversationFields(NamedTuple):
    chat_id: int  # the Telegram chat
    topic: int | None  # the topic's `message_thread_id`; None: the chat itself
    account: int | None  # the owner whose business account the chat is in; None: a chat with the bot itself


class Conversation(_ConversationFields):
    """A chat (`topic` None) or one of its topics; or, with `account`, a contact's private chat in that
    owner's business account (never a topic). The General topic is the chat itself. (A named tuple, checked
    when it is made: every function builds these on its way to a first draft, and a dataclass costs several
    times as much to define.)"""

    __slots__ = ()

    def __new__(cls, chat_id: int, topic: int | None = None, account: int | None = None) -> Conversation:
        if not -MAX_CHAT <= chat_id <= MAX_CHAT:
            raise ValueError(f"not a chat id: {chat_id}")
        if topic == GENERAL_TOPIC:
            topic = None
        elif topic is not None and not GENERAL_TOPIC < topic <= MAX_TOPIC:
            raise ValueError(f"not a topic id: {topic}")
        if account is not None:
            if not 0 < account <= MAX_CHAT:
                raise ValueError(f"not an account owner's id: {account}")
            if chat_id <= 0 or topic is not None:
                raise ValueError(f"not a contact's private chat: {chat_id} (topic {topic})")
        return super().__new__(cls, chat_id, topic, account)

    @property
    def in_group(self) -> bool:
        """Whether the chat is a group or supergroup. Telegram gives groups negative chat ids and people
        positive ones; this is the one place that relies on it."""
        return self.chat_id < 0

    @property
    def in_business(self) -> bool:
        """Whether it is a contact's chat in an owner's business account (not a chat with the bot)."""
        return self.account is not None

    @property
    def main(self) -> Conversation:
        """The chat's main conversation (where what was meant for a deleted topic goes); a contact's chat is
        its own."""
        return self if self.topic is None else Conversation(self.chat_id)

    def label(self) -> str:
        """A short name for turn names and logs: `123`, `123t45` (a topic) or `123b678` (contact 123's chat in
        owner 678's account). Letters, digits and "-" only, as Step Functions' execution names allow."""
        if self.account is not None:
            return f"{self.chat_id}b{self.account}"
        return str(self.chat_id) if self.topic is None else f"{self.chat_id}t{self.topic}"

    def __repr__(self) -> str:
        return f"Conversation({self.label()})"


class Scope(NamedTuple):
    """Whose a turn is, decided where its message is queued and carried with it: the conversation it answers,
    who speaks (`user_id`: the person, in a group the member; `sender`: a member's first name, which the
    model sees), and so whose tasks, reminders and memories it reads and writes (`owner`).

    In a contact's chat in an owner's business account (a secretary turn), `user_id` is the contact, who
    speaks there as a member does in a group (the history marks their words as theirs), and `owner` is the
    account's owner, taken from the conversation like a group's from its chat id, never from the message: the
    turn drafts the owner's reply, so the tasks, reminders and memories it reads are the owner's. It is not
    the owner who speaks, so `user_id` is not theirs: the contact's words never carry the owner's identity
    (what only the owner may do, such as a command or answering an approval, stays out of the contact's
    reach). What keys on `user_id` (a profile, OAuth tools, the daily budget, who may answer an approval)
    is therefore the contact's there, and a contact may be a user of the bot too: a secretary turn takes
    the owner's time zone and budget through `owner`, and none of the contact's own."""

    conversation: Conversation
    user_id: int
    sender: str | None = None

    @property
    def in_group(self) -> bool:
        """Whether the turn answers a group."""
        return self.conversation.in_group

    @property
    def owner(self) -> int:
        """Whose data the turn reads and writes: the group's own (its chat id) in a group, the account owner's
        in a contact's chat of their business account, the person's (their user id) in a private chat. Taken
        from the turn, never from the model, so a member's private data never reaches a group's turn and the
        group's never appears in private."""
        if self.conversation.account is not None:
            return self.conversation.account
        return self.conversation.chat_id if self.in_group else self.user_id

    @property
    def payer(self) -> int:
        """Whose daily token budget the turn counts against: the person who spoke (in a group, the member),
        but in a contact's chat of a business account the owner, whose secretary drafts there."""
        return self.conversation.account if self.conversation.account is not None else self.user_id

    @property
    def member(self) -> str | None:
        """In a group, the first name of the member who asked ("" when unknown); None in a private chat."""
        return (self.sender or "") if self.in_group else None


def conversation_of(message: Message) -> Conversation:
    """The conversation a message belongs to: its topic only when `is_topic_message` is true (a reply in an
    ordinary group also carries a thread id); the chat itself otherwise, and for the General topic."""
    topic = message.message_thread_id if message.is_topic_message else None
    return Conversation(message.chat.id, topic)
