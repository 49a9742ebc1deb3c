"""The summarizer: folds a chat's older messages into its rolling summary and stores it as a memory.

It visits only the chats marked due, summarizes the messages past the watermark that are older than the
recent window, and moves the watermark last: a failure part-way (model, embedding or index) loses nothing,
and the next run does the same batch again. History itself is never deleted.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from pydantic import BaseModel, ConfigDict

from stepwise.ids import iso_utc, utc_now
from stepwise.model.types import ChatModel, ModelRequest

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from datetime import datetime

    from stepwise.chats.store import ChatRecord, ChatStore
    from stepwise.history.models import StoredMessage
    from stepwise.history.repository import MessageRepository
    from stepwise.memory.service import MemoryService
    from stepwise.telegram.conversation import Conversation

logger = logging.getLogger(__name__)

MAX_SUMMARY_CHARS = 1500
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


class ModelSummarizer:
    """Summaries written by the chat model (Claude)."""

    def __init__(self, model: Callable[[], ChatModel], model_name: str, max_tokens: int = 600) -> None:
        self._model, self._model_name, self._max_tokens = model, model_name, max_tokens

    def summarize(self, previous: str, messages: Sequence[StoredMessage]) -> str:
        transcript = "\n".join(f"{m.role.capitalize()}: {m.content}" for m in messages)
        prompt = f"Previous summary:\n{previous or '(none yet)'}\n\nNew messages, oldest first:\n{transcript}"
        response = self._model().complete(
            ModelRequest(
                model=self._model_name,
                max_tokens=self._max_tokens,
                system=[{"type": "text", "text": SUMMARY_INSTRUCTIONS}],
                messages=[{"role": "user", "content": [{"type": "text", "text": prompt}]}],
            )
        )
        text = "\n".join(b["text"] for b in response.content if b.get("type") == "text").strip()
        if not text:
            raise ValueError("the model returned an empty summary")
        return text[:MAX_SUMMARY_CHARS]


class ExtractiveSummarizer:
    """The offline summarizer: a short bullet list of the user's statements and of what was done, newest
    last, within the size bound (see `stepwise.memory.extractive`)."""

    def summarize(self, previous: str, messages: Sequence[StoredMessage]) -> str:
        from stepwise.memory.extractive import extractive_summary  # the rules model's grammar, offline only

        return extractive_summary(previous, messages, MAX_SUMMARY_CHARS)


class SummarizeInput(BaseModel):
    """The scheduled event or a manual run. `force` visits every chat and folds every unsummarized message
    in, ignoring the threshold and the recent window (to try memory out locally)."""

    model_config = ConfigDict(defer_build=True, extra="ignore")

    force: bool = False


class SummarizeOutput(BaseModel):
    """What one run did."""

    model_config = ConfigDict(defer_build=True)

    visited: int = 0
    summarized: int = 0
    messages: int = 0
    failed: list[int] = []


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


class SummaryFailedError(RuntimeError):
    """Some chats failed (they stay due and are retried next run); raised after every chat was tried."""


def summarize_chats(request: SummarizeInput, services: SummarizeServices) -> SummarizeOutput:
    """Visit the due chats (or, forced, every chat) and summarize each one's older messages."""
    result = SummarizeOutput()
    chat_ids = services.chats.all_chats() if request.force else services.chats.due_chats()
    for chat_id in chat_ids:
        result.visited += 1
        try:
            count = _summarize_chat(chat_id, request.force, services)
        except Exception:
            logger.exception("summarizing failed; the chat stays due", extra={"chat_id": chat_id})
            result.failed.append(chat_id.key)
            continue
        if count:
            result.summarized += 1
            result.messages += count
    logger.info("summarizer run", extra=result.model_dump())
    if result.failed:
        raise SummaryFailedError(f"{len(result.failed)} chat(s) failed: {result.failed}")
    return result


def _summarize_chat(chat_id: Conversation, force: bool, services: SummarizeServices) -> int:
    chat = services.chats.get(chat_id)
    if chat is None:
        return 0
    pending = services.messages.after(chat_id, chat.summarized_key)
    window = 0 if force else services.history_limit
    older = pending[: max(len(pending) - window, 0)]
    batch = older[: services.batch_limit]
    if not batch or (not force and len(older) < services.threshold):
        if chat.due:
            _advance(chat, services, chat.summarized_key, 0, chat.summary, still_due=False)
        return 0
    summary = services.summarizer.summarize(chat.summary, batch)
    now = iso_utc(services.clock())
    services.memory.save_summary(chat.user_id, chat_id, summary, now)
    remaining = len(older) - len(batch)
    _advance(
        chat,
        services,
        batch[-1].sort_key,
        len(batch),
        summary,
        still_due=remaining >= max(services.threshold, 1),
    )
    return len(batch)


def _advance(
    chat: ChatRecord, services: SummarizeServices, key: str, count: int, summary: str, still_due: bool
) -> None:
    now = iso_utc(services.clock())
    if not services.chats.advance(
        chat, summarized_key=key, summarized=count, summary=summary, now=now, still_due=still_due
    ):
        logger.info("another run moved the watermark first", extra={"chat_id": chat.chat_id})
