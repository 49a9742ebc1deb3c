"""The summarizer: folds a chat's older messages into its rolling summary and stores it as a memory.

It visits only the chats marked due, summarizes the messages past the watermark that are older than the
recent window, and moves the watermark last: a failure part-way (model, embedding or index) loses nothing,
and the next run does the same batch again. A chat that fails is logged once and never fails the run (the
schedule would retry every chat); after `MAX_SUMMARY_ATTEMPTS` failed runs in a row it is no longer due
until its next message. An empty summary (nothing worth keeping) is neither written nor embedded: the
chat's summary stays as it was and the watermark moves on. History itself is never deleted.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from pydantic import BaseModel, ConfigDict

from stepwise.aws.conversation_key import conversation_key
from stepwise.history.forwarded import origin_words
from stepwise.model.types import ChatModel, ModelRequest
from stepwise.telegram.conversation import Conversation, Scope
from stepwise.turn.ids import iso_utc, utc_now

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from datetime import datetime

    from stepwise.chats.store import ChatRecord, ChatStore
    from stepwise.history.models import StoredMessage
    from stepwise.history.repository import MessageRepository
    from stepwise.memory.service import MemoryService

logger = logging.getLogger(__name__)

MAX_SUMMARY_CHARS = 1500
MAX_SUMMARY_ATTEMPTS = 3  # failed runs in a row before a chat waits for its next message
SUMMARY_INSTRUCTIONS = """You keep the long-term memory of a Telegram conversation between a user and their
personal assistant, Stepwise. Merge the previous summary and the new messages into one updated summary of
what is worth remembering later: facts about the user and the people in their life, preferences, plans,
decisions, promises and open questions. Drop small talk. Write plain sentences in the third person, at most
200 words, and output only the summary."""


class Summarizer(Protocol):
    """Writes the updated rolling summary."""

    def summarize(self, previous: str, messages: Sequence[StoredMessage]) -> str:
        """The new rolling summary, folding `previous` in."""
        ...


def transcript_line(message: StoredMessage) -> str:
    """One message as the summarizer reads it; a forwarded one names its origin, so that someone else's words
    are not summed up as the user's."""
    if message.forwarded is not None:
        return f"User forwarded a message from {origin_words(message.forwarded)}: {message.content}"
    return f"{message.role.capitalize()}: {message.content}"


class ModelSummarizer:
    """Summaries written by the chat model (Claude)."""

    def __init__(self, model: Callable[[], ChatModel], model_name: str, max_tokens: int = 600) -> None:
        self._model, self._model_name, self._max_tokens = model, model_name, max_tokens

    def summarize(self, previous: str, messages: Sequence[StoredMessage]) -> str:
        transcript = "\n".join(transcript_line(m) for m in messages)
        prompt = f"Previous summary:\n{previous or '(none yet)'}\n\nNew messages, oldest first:\n{transcript}"
        response = self._model().complete(
            ModelRequest(
                model=self._model_name,
                max_tokens=self._max_tokens,
                system=[{"type": "text", "text": SUMMARY_INSTRUCTIONS}],
                messages=[{"role": "user", "content": [{"type": "text", "text": prompt}]}],
            )
        )
        text = "\n".join(b["text"] for b in response.content if b["type"] == "text").strip()
        return text[:MAX_SUMMARY_CHARS]  # empty: nothing to keep (the previous summary stays)


class ExtractiveSummarizer:
    """The offline summarizer: a short bullet list of the user's statements and of what was done, newest
    last, within the size bound (see `stepwise.memory.extractive`)."""

    def summarize(self, previous: str, messages: Sequence[StoredMessage]) -> str:
        # the offline rules model: only a summary made without Claude
        from stepwise.memory.extractive import extractive_summary

        return extractive_summary(previous, messages, MAX_SUMMARY_CHARS)


class SummarizeInput(BaseModel):
    """The scheduled event or a manual run. `force` visits every chat and folds every unsummarized message
    in, ignoring the threshold and the recent window (to try memory out locally)."""

    model_config = ConfigDict(defer_build=True, extra="ignore")

    force: bool = False


class SummarizeOutput(BaseModel):
    """What one run did. `summarized`/`messages`: the chats whose messages were read and folded in, and how
    many; `kept`: of those, the chats whose summary changed (the rest held nothing worth keeping: small talk,
    questions, commands); `failed`: the chats that failed (logged, retried by a later run)."""

    model_config = ConfigDict(defer_build=True)

    visited: int = 0
    summarized: int = 0
    messages: int = 0
    kept: int = 0
    failed: list[int] = []  # as the tables key the conversations, as the logs name them too


@dataclass
class SummarizeServices:
    """What the summarizer needs."""

    chats: ChatStore
    messages: MessageRepository
    memory: MemoryService
    summarizer: Summarizer
    history_limit: int = 20
    threshold: int = 20
    batch_limit: int = 200
    clock: Callable[[], datetime] = utc_now


def summarize_chats(request: SummarizeInput, services: SummarizeServices) -> SummarizeOutput:
    """Visit the due chats (or, forced, every chat) and summarize each one's older messages. A chat that
    fails is logged and counted in `failed`; the others go on and the run itself succeeds."""
    result = SummarizeOutput()
    conversations = services.chats.all_chats() if request.force else services.chats.due_chats()
    for conversation in conversations:
        result.visited += 1
        try:
            count, kept = _summarize_chat(conversation, request.force, services)
        except Exception:
            result.failed.append(conversation_key(conversation))
            _count_failure(conversation, services)
            continue
        if count:
            result.summarized += 1
            result.messages += count
            result.kept += kept
    logger.info("summarizer run", extra=result.model_dump())
    return result


def _count_failure(conversation: Conversation, services: SummarizeServices) -> None:
    """Log the failure (once, with its traceback) and count it; the chat stays due unless it has failed
    `MAX_SUMMARY_ATTEMPTS` runs in a row."""
    try:
        failures = services.chats.record_summary_failure(conversation, MAX_SUMMARY_ATTEMPTS)
    except Exception as error:  # the count is best effort: the run goes on with the other chats
        failures = 0
        logger.warning(
            "could not count the failure",
            extra={"chat_id": conversation_key(conversation), "error": repr(error)},
        )
    waits = failures >= MAX_SUMMARY_ATTEMPTS
    logger.exception(
        "summarizing failed; the chat waits for its next message"
        if waits
        else "summarizing failed; the chat stays due",
        extra={"chat_id": conversation_key(conversation), "failures": failures},
    )


def _summarize_chat(conversation: Conversation, force: bool, services: SummarizeServices) -> tuple[int, bool]:
    """(the messages folded in, whether the summary changed)."""
    chat = services.chats.get(conversation)
    if chat is None:
        return 0, False
    pending = services.messages.after(conversation, chat.summarized_key)
    window = 0 if force else services.history_limit
    older = pending[: max(len(pending) - window, 0)]
    batch = older[: services.batch_limit]
    if not batch or (not force and len(older) < services.threshold):
        if chat.due:
            _advance(chat, services, chat.summarized_key, 0, chat.summary, still_due=False)
        return 0, False
    summary = services.summarizer.summarize(chat.summary, batch).strip()
    kept = bool(summary) and summary != (chat.summary or "").strip()
    if summary:
        owner = Scope(conversation, chat.user_id).owner  # a group's summary is the group's
        # a contact's chat in a business account keeps its summary on its record only: as the owner's memory
        # it would be recalled in the owner's own conversations with the bot, which it never enters
        if not conversation.in_business:
            services.memory.save_summary(owner, conversation, summary, iso_utc(services.clock()))
    else:
        logger.info(
            "nothing worth keeping; the summary stays as it was",
            extra={"chat_id": conversation_key(conversation)},
        )
        summary = chat.summary
    remaining = len(older) - len(batch)
    _advance(
        chat,
        services,
        batch[-1].sort_key,
        len(batch),
        summary,
        still_due=remaining >= max(services.threshold, 1),
    )
    return len(batch), kept


def _advance(
    chat: ChatRecord, services: SummarizeServices, key: str, count: int, summary: str, still_due: bool
) -> None:
    now = iso_utc(services.clock())
    if not services.chats.advance(
        chat, summarized_key=key, summarized=count, summary=summary, now=now, still_due=still_due
    ):
        logger.info(
            "another run moved the watermark first", extra={"chat_id": conversation_key(chat.conversation)}
        )
