"""Whether a group message is addressed to the bot (docs/groups.md): a `mention` of its username, a
`text_mention` of it, a reply to one of its messages, or a command for it (`/tasks`, `/tasks@<its name>`).

Entity offsets and lengths count UTF-16 code units; a caption's entities count as a text's. An entity that
reaches past its text, overlaps another or is of a type Stepwise does not know marks nothing here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from stepwise.telegram.commands import command_target

if TYPE_CHECKING:
    from stepwise.telegram.models import Message, MessageEntity

GROUP_CHAT_TYPES = frozenset({"group", "supergroup"})


class BotIdentity(NamedTuple):
    """Who the bot is, from getMe."""

    id: int
    username: str  # without the "@"
    can_read_all_group_messages: bool = False  # privacy mode off (or an admin)


def in_group(message: Message) -> bool:
    """Whether the message was written in a group or supergroup."""
    return message.chat.type in GROUP_CHAT_TYPES


def _text_and_entities(message: Message) -> tuple[str, list[MessageEntity]]:
    if message.text is not None:
        return message.text, list(message.entities or ())
    return message.caption or "", list(message.caption_entities or ())


def entity_text(text: str, entity: MessageEntity) -> str | None:
    """The text an entity marks (offsets in UTF-16 code units); None when it reaches past the text."""
    units = text.encode("utf-16-le", "surrogatepass")
    start, end = 2 * entity.offset, 2 * (entity.offset + entity.length)
    if end > len(units) or entity.length == 0:
        return None
    return units[start:end].decode("utf-16-le", "surrogatepass")


def might_be_addressed(message: Message) -> bool:
    """Whether the message could be addressed to any bot at all: false means it surely is not, with no need
    to ask getMe who this bot is (most of a group's messages)."""
    text, entities = _text_and_entities(message)
    reply = message.reply_to_message
    return (
        any(entity.type in ("mention", "text_mention") for entity in entities)
        or command_target(text) is not None
        or (reply is not None and reply.from_user is not None and reply.from_user.is_bot)
    )


def addressed(message: Message, bot: BotIdentity) -> bool:
    """Whether the message is addressed to `bot` (see the module docstring)."""
    text, entities = _text_and_entities(message)
    mention = "@" + bot.username.lower()
    for entity in entities:
        if entity.type == "text_mention" and entity.user is not None and entity.user.id == bot.id:
            return True
        if entity.type == "mention":
            marked = entity_text(text, entity)
            if marked is not None and marked.lower() == mention:
                return True
    target = command_target(text)
    if target is not None and (target == "" or target.lower() == bot.username.lower()):
        return True
    reply = message.reply_to_message
    return (
        reply is not None
        and reply.forum_topic_created is None  # a topic's root message: the message is in a topic, no reply
        and reply.from_user is not None
        and reply.from_user.id == bot.id
    )


def without_leading_mention(text: str, bot: BotIdentity) -> str:
    """The text without the bot's @username in front ("@stepwise_bot, add bread" → "add bread"): what the
    member asks, as a private chat would have it."""
    mention = "@" + bot.username
    if not bot.username or text[: len(mention)].lower() != mention.lower():
        return text
    rest = text[len(mention) :]
    if rest[:1].isalnum() or rest[:1] == "_":  # a longer username: someone else
        return text
    return rest.lstrip(" ,:;\u00a0\t\n") or text
