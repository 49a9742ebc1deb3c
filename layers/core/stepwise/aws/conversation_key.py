"""The number a conversation is stored under: the partition key (`chat_id`) of the inbox, the messages and the
chat records, and what a chat's summary is named by. Only the DynamoDB adapters use it.

The chat itself keeps its chat id as its key, so everything stored before topics existed reads as the chat's
main conversation without a migration; a topic's key lies past every chat id (`|key| >= TOPIC_FACTOR`, while
chat ids stay under 2^53), so no topic's key is a chat's. A contact's chat in an owner's business account has
a band of its own past every topic's (`key >= BUSINESS_BASE`, while topics' keys stay under 2^31·10¹⁶ < 10²⁶):
`10³² + owner·10¹⁶ + chat`, at most 33 digits, which DynamoDB's 38 hold.
"""

from __future__ import annotations

from stepwise.telegram.conversation import Conversation

TOPIC_FACTOR = 10**16  # > every chat id's magnitude
BUSINESS_BASE = 10**32  # > every topic's key; > every owner id · TOPIC_FACTOR


def conversation_key(conversation: Conversation) -> int:
    """The conversation's storage key: `chat_id` for the chat itself, `chat_id ± topic·10¹⁶` for a topic,
    `10³² + owner·10¹⁶ + chat_id` for a contact's chat in an owner's business account."""
    chat, topic, account = conversation
    if account is not None:
        return BUSINESS_BASE + account * TOPIC_FACTOR + chat
    if topic is None:
        return chat
    return chat + (topic * TOPIC_FACTOR if chat > 0 else -topic * TOPIC_FACTOR)


def conversation_at(key: int) -> Conversation:
    """The conversation stored under `key` (a key stored before topics: the chat itself)."""
    if key >= BUSINESS_BASE:
        account, chat = divmod(key - BUSINESS_BASE, TOPIC_FACTOR)
        return Conversation(chat, account=account)
    magnitude = abs(key) % TOPIC_FACTOR
    return Conversation(magnitude if key > 0 else -magnitude, abs(key) // TOPIC_FACTOR or None)
