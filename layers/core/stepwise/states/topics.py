"""Topics at the end of a turn (FinishTurn): the topic /new opens, and the name a topic Telegram named gets
after its first answer (docs/topics.md)."""

from __future__ import annotations

import logging
import re
from typing import TYPE_CHECKING

from stepwise.commands.new_topic import NOT_A_FORUM, THREADS_OFF
from stepwise.telegram.conversation import Conversation
from stepwise.telegram.errors import TelegramBadRequest, TelegramError, TelegramForbidden
from stepwise.turn_records.models import NewTopic

if TYPE_CHECKING:
    from stepwise.services import TurnServices
    from stepwise.turn.ref import TurnRef
    from stepwise.turn_records.models import Reply, TurnMeta

logger = logging.getLogger(__name__)

NAME_WORDS = 6  # a topic's name from the first words of its first message
NAME_CHARS = 40
_WORD = re.compile(r"[^\W_][\w'\u2019&+.-]*")


def topic_name(text: str) -> str | None:
    """A short name from a message's first words ("Can you help me plan a trip to Lisbon in May?" ->
    "Help me plan a trip to"): the first line's words, without a leading please/can you, up to `NAME_WORDS`
    words and `NAME_CHARS` characters, capitalized; None when it has no words (a photo, a sticker)."""
    line = text.strip().split("\n", 1)[0]
    words = [w.rstrip(".") for w in _WORD.findall(line)]
    lowered = [w.lower() for w in words]
    for lead in (("can", "you"), ("could", "you"), ("would", "you"), ("please",), ("hey",), ("hi",)):
        if tuple(lowered[: len(lead)]) == lead:
            words, lowered = words[len(lead) :], lowered[len(lead) :]
    name = ""
    for word in [w for w in words if w][:NAME_WORDS]:
        if len(name) + len(word) + 1 > NAME_CHARS:
            name = name or word[:NAME_CHARS]  # one long word: its start
            break
        name = f"{name} {word}".strip()
    return name[:1].upper() + name[1:] if name else None


def open_topic(turn: TurnRef, reply: Reply, services: TurnServices) -> Reply:
    """The topic the reply of /new opens, made once: its thread is recorded before anything is sent in it,
    so a retried FinishTurn sends in the same topic. When Telegram refuses (threads off, or a group that is
    not a forum) the reply says that no topic was opened and how to turn topics on, where /new was written,
    and the history keeps that answer (not "Opened a new topic")."""
    opens = reply.extra
    if not isinstance(opens, NewTopic) or opens.thread is not None:
        return reply
    try:
        thread = services.outbound.telegram().create_forum_topic(turn.chat_id, opens.name)
    except (TelegramBadRequest, TelegramForbidden) as error:
        logger.warning("no topic opened", extra={"error": str(error)})
        refusal = NOT_A_FORUM if turn.conversation.in_group else THREADS_OFF
        return reply.model_copy(update={"text": refusal, "extra": None})
    services.stores.turns.set_topic_thread(turn.turn_id, thread)
    if not opens.named:
        services.stores.chats.set_topic_unnamed(Conversation(turn.chat_id, thread), True)
    logger.info("topic opened", extra={"topic_opened": thread})
    return reply.model_copy(update={"extra": opens.model_copy(update={"thread": thread})})


def rename_topic(meta: TurnMeta, services: TurnServices) -> None:
    """Give the turn's topic the name its first answer brings (`meta.topic_name`), once: the topic's record
    is claimed first, so a retried FinishTurn or a later turn does not rename it again. Best effort."""
    if meta.topic is None or meta.topic_name is None:
        return
    if not services.stores.chats.claim_topic_rename(meta.conversation):
        return
    try:
        services.outbound.telegram().edit_forum_topic(meta.chat_id, meta.topic, meta.topic_name)
    except TelegramError as error:
        logger.warning("topic not renamed", extra={"error": str(error)})
        return
    logger.info("topic renamed", extra={"topic": meta.topic})
