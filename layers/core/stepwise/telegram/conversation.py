"""What names a conversation: a chat, or one topic of it (docs/topics.md).

A message belongs to topic N when it has `message_thread_id` N and `is_topic_message` true; otherwise to the
chat itself (in ordinary groups, replies carry a thread id without being in a topic; a forum's General topic,
id 1, is the chat itself). A conversation has its own inbox and lease, history, summary and turns.

`Conversation` is an int: its value is the key that the inbox, the history and the chat records are stored
under. The chat itself keeps its chat id as its key, so everything stored before topics existed reads as the
chat's main conversation without a migration; a topic's key lies past every chat id
(`|key| >= TOPIC_FACTOR`, while chat ids stay under 2^53), so no topic's key can be a chat's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from stepwise.telegram.models import Message

GENERAL_TOPIC = 1  # a forum's General topic: the chat itself; Telegram refuses it as a message_thread_id
MAX_TOPIC = 2**31 - 1  # topic ids are message ids
MAX_CHAT = 2**53 - 1
TOPIC_FACTOR = 10**16  # > MAX_CHAT: a topic's key never equals a chat id (38 digits hold any key)


class Conversation(int):
    """A chat (`topic` None) or one of its topics; the value is the conversation's storage key."""

    __slots__ = ()

    @classmethod
    def of(cls, chat_id: int, topic: int | None = None) -> Conversation:
        """The conversation of `chat_id` in `topic` (None or the General topic: the chat itself)."""
        if not -MAX_CHAT <= chat_id <= MAX_CHAT:
            raise ValueError(f"not a chat id: {chat_id}")
        if topic is None or topic == GENERAL_TOPIC:
            return cls(chat_id)
        if not GENERAL_TOPIC < topic <= MAX_TOPIC:
            raise ValueError(f"not a topic id: {topic}")
        return cls(chat_id + (topic * TOPIC_FACTOR if chat_id > 0 else -topic * TOPIC_FACTOR))

    @property
    def chat_id(self) -> int:
        """The Telegram chat."""
        magnitude = abs(int(self)) % TOPIC_FACTOR
        return magnitude if self > 0 else -magnitude

    @property
    def topic(self) -> int | None:
        """The topic's `message_thread_id`, or None for the chat itself."""
        return abs(int(self)) // TOPIC_FACTOR or None

    @property
    def key(self) -> int:
        """The storage key, as a plain int (what the tables' `chat_id` attribute holds)."""
        return int(self)

    @property
    def main(self) -> Conversation:
        """The chat's main conversation (where what was meant for a deleted topic goes)."""
        return Conversation(self.chat_id)

    def label(self) -> str:
        """A short name for turn names and logs: `123` or `123t45`."""
        return str(self.chat_id) if self.topic is None else f"{self.chat_id}t{self.topic}"

    def __repr__(self) -> str:
        return f"Conversation({self.label()})"

    def __str__(self) -> str:  # the key, as any int prints (f-strings, str(), serializers)
        return int.__repr__(self)


def data_owner(chat_id: int, user_id: int) -> int:
    """Whose tasks, reminders and memories a turn reads and writes (docs/groups.md): a group's own (its chat
    id; groups' ids are negative) in a group, the person's own (their user id) in a private chat. Taken from
    the turn, never from the model, so a member's private data never reaches a group's turn and the group's
    never appears in private."""
    return chat_id if chat_id < 0 else user_id


def conversation_of(message: Message) -> Conversation:
    """The conversation a message belongs to: its topic only when `is_topic_message` is true (a reply in an
    ordinary group also carries a thread id); the chat itself otherwise, and for the General topic."""
    topic = message.message_thread_id if message.is_topic_message else None
    return Conversation.of(message.chat.id, topic)
