"""Streamed answers as Telegram drafts: the text growing in a private chat while the model writes it.

A draft (`sendMessageDraft`) is an ephemeral preview, never a message: the reply itself is still sent once
by SendReply. Drafts are best effort. They go out at most once per interval, only in private chats, and the
first one that fails or is slow ends them for the rest of the model call; nothing here ever raises.
"""

from __future__ import annotations

import hashlib
import logging
import time
from typing import TYPE_CHECKING, Protocol

from stepwise.telegram.formatting import render_reply

if TYPE_CHECKING:
    from collections.abc import Callable

    from stepwise.telegram.conversation import Conversation

logger = logging.getLogger(__name__)

SLOW_DRAFT_SECONDS = 1.0  # a draft call that takes longer ends drafts: they must not hold the stream up
MAX_DRAFT_ID = 2**31 - 1


class DraftSender(Protocol):
    """What drafts need from Telegram."""

    def send_message_draft(
        self,
        chat_id: int,
        draft_id: int,
        text: str,
        *,
        parse_mode: str | None = None,
        message_thread_id: int | None = None,
    ) -> None:
        """Show the draft `draft_id` with this text; updates of one draft id are animated."""
        ...


def draft_id_for(turn_id: str) -> int:
    """A non-zero draft id fixed per turn: every model call of the turn (retries too) updates one draft."""
    digest = hashlib.sha256(turn_id.encode()).digest()
    return int.from_bytes(digest[:4], "big") % MAX_DRAFT_ID + 1


def render_draft(text: str) -> tuple[str, str | None] | None:
    """The draft's text and parse mode: the reply's first message as SendReply would render it (Markdown as
    Telegram HTML), or None once the answer is longer than one message (the draft then stops changing)."""
    chunks = render_reply(text)
    if len(chunks) > 1:
        return None
    return chunks[0].html, "HTML"


class DraftStream:
    """An `on_text` callback for a model stream: collects the text deltas and shows them as a draft."""

    def __init__(
        self,
        sender: Callable[[], DraftSender],
        conversation: Conversation,
        draft_id: int,
        interval_seconds: float,
        *,
        clock: Callable[[], float] = time.monotonic,
        render: Callable[[str], tuple[str, str | None] | None] = render_draft,
    ) -> None:
        self._sender = sender
        self._conversation = conversation
        self._draft_id = draft_id
        self._interval = interval_seconds
        self._clock = clock
        self._render = render
        self._text = ""
        self._shown = ""
        self._last_sent: float | None = None
        self.sent = 0
        self.stopped = False

    def __call__(self, delta: str) -> None:
        """Take the next piece of text; send a draft when the last one is at least an interval old."""
        self._text += delta
        if self.stopped or not self._text.strip() or self._text == self._shown:
            return
        now = self._clock()
        if self._last_sent is not None and now - self._last_sent < self._interval:
            return
        self._send(now)

    def _send(self, now: float) -> None:
        try:
            rendered = self._render(self._text)
            if rendered is None:
                self._stop("the answer is longer than one message")
                return
            text, parse_mode = rendered
            where = self._conversation
            self._sender().send_message_draft(
                where.chat_id, self._draft_id, text, parse_mode=parse_mode, message_thread_id=where.topic
            )
        except Exception as error:  # best effort: a draft never fails the model call
            self._stop(f"{type(error).__name__}: {error}")
            return
        self._last_sent = self._clock()
        self._shown = self._text
        self.sent += 1
        if self._last_sent - now > SLOW_DRAFT_SECONDS:
            self._stop(f"a draft took {self._last_sent - now:.1f}s")

    def _stop(self, reason: str) -> None:
        self.stopped = True
        logger.warning("drafts stopped for this model call: %s", reason)


def draft_stream(
    sender: Callable[[], DraftSender] | None,
    conversation: Conversation,
    turn_id: str,
    interval_seconds: float,
) -> DraftStream | None:
    """Drafts for a model call of this turn (in its topic, if any), or None: groups get none (Telegram has
    drafts only in private chats), nor does anyone when the interval is 0 or no sender is configured."""
    if sender is None or interval_seconds <= 0 or conversation.in_group:
        return None
    return DraftStream(sender, conversation, draft_id_for(turn_id), interval_seconds)
