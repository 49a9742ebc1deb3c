"""The number a conversation is stored under: the partition key (`chat_id`) of the inbox, the messages and the
chat records, and what a chat's summary is named by. Only the DynamoDB adapters use it.

The chat itself keeps its chat id as its key, so everything stored before topics existed reads as the chat's
main conversation without a migration; a topic's key lies past every chat id (`|key| >= TOPIC_FACTOR`, while
chat ids stay under 2^53, and DynamoDB's 38 digits hold any key), so no topic's key is a chat's.
"""

from __future__ import annotations

from stepwise.telegram.conversation import Conversation

TOPIC_FACTOR = 10**16  # > every chat id's magnitude


def conversation_key(conversation: Conversation) -> int:
    """The conversation's storage key: `chat_id` for the chat itself, `chat_id ± topic·10¹⁶` for a topic."""
    chat, topic = conversation.chat_id, conversation.topic
    if topic is None:
        return chat
    return chat + (topic * TOPIC_FACTOR if chat > 0 else -topic * TOPIC_FACTOR)


def conversation_at(key: int) -> Conversation:
    """The conversation stored under `key` (a key stored before topics: the chat itself)."""
    magnitude = abs(key) % TOPIC_FACTOR
    return Conversation(magnitude if key > 0 else -magnitude, abs(key) // TOPIC_FACTOR or None)
