"""``InMemoryTelegram``: an in-memory ``TelegramClient`` for unit tests of other modules."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from stepwise.telegram.errors import TelegramBadRequest
from stepwise.telegram.keyboard import ForceReply, InlineKeyboardMarkup

_MAX_TEXT = 4096
_METHODS = frozenset(
    {
        "send_message",
        "send_chat_action",
        "send_voice",
        "send_message_draft",
        "answer_callback_query",
        "edit_message_text",
        "set_webhook",
        "get_me",
        "create_forum_topic",
        "edit_forum_topic",
    }
)


@dataclass
class SentMessage:
    """A message as the fake holds it; edits change ``text``, ``parse_mode`` and ``reply_markup``."""

    chat_id: int
    message_id: int
    text: str
    parse_mode: str | None = None
    reply_markup: InlineKeyboardMarkup | ForceReply | None = None
    edits: int = 0
    message_thread_id: int | None = None
    business_connection_id: str | None = None  # sent through this business connection, in its owner's name


@dataclass
class InMemoryTelegram:
    """Records every call (failed ones too) in ``calls``; sent messages are in ``sent``.

    ``fail_next(method, error)`` makes the next call(s) of a method (Python name, e.g.
    ``"send_message"``) raise ``error`` instead. Empty or over-long texts raise
    ``TelegramBadRequest`` like Telegram does.
    """

    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    sent: list[SentMessage] = field(default_factory=list)
    webhook: dict[str, Any] | None = None
    voices: list[tuple[int, bytes]] = field(default_factory=list)  # (chat_id, Ogg Opus) of each voice sent
    topics_enabled: bool = True  # getMe's has_topics_enabled
    forums: set[int] = field(default_factory=set)  # the groups that are forums; the others have no topics
    topics: dict[tuple[int, int], str] = field(default_factory=dict)  # (chat, thread) -> name, as created
    _failures: dict[str, list[Exception]] = field(default_factory=dict, init=False, repr=False)
    _last_id: dict[int, int] = field(default_factory=dict, init=False, repr=False)

    def fail_next(self, method: str, error: Exception, times: int = 1) -> None:
        """Make the next ``times`` calls of ``method`` raise ``error``."""
        if method not in _METHODS:
            raise ValueError(f"unknown method {method!r}; one of {sorted(_METHODS)}")
        self._failures.setdefault(method, []).extend([error] * times)

    def calls_of(self, method: str) -> list[dict[str, Any]]:
        """The parameters of every recorded call of ``method``, in order."""
        return [params for name, params in self.calls if name == method]

    def texts(self, chat_id: int | None = None) -> list[str]:
        """Current texts of the sent messages (optionally of one chat), in order."""
        return [m.text for m in self.sent if chat_id is None or m.chat_id == chat_id]

    def send_message(
        self,
        chat_id: int,
        text: str,
        *,
        parse_mode: str | None = None,
        reply_markup: InlineKeyboardMarkup | ForceReply | None = None,
        link_previews: bool = False,
        message_thread_id: int | None = None,
        business_connection_id: str | None = None,
    ) -> int:
        """Record the message and return a new message_id (increasing per chat)."""
        self._record(
            "send_message",
            chat_id=chat_id,
            text=text,
            parse_mode=parse_mode,
            reply_markup=reply_markup,
            link_previews=link_previews,
            message_thread_id=message_thread_id,
            business_connection_id=business_connection_id,
        )
        _check_text("sendMessage", text)
        message_id = self._next_id(chat_id)
        self.sent.append(
            SentMessage(
                chat_id,
                message_id,
                text,
                parse_mode,
                reply_markup,
                message_thread_id=message_thread_id,
                business_connection_id=business_connection_id,
            )
        )
        return message_id

    def send_chat_action(
        self, chat_id: int, action: str = "typing", *, message_thread_id: int | None = None
    ) -> None:
        """Record the chat action."""
        self._record("send_chat_action", chat_id=chat_id, action=action, message_thread_id=message_thread_id)

    def send_voice(
        self,
        chat_id: int,
        ogg_opus: bytes,
        *,
        duration: int | None = None,
        message_thread_id: int | None = None,
    ) -> int:
        """Record the voice message and return a new message_id."""
        self._record(
            "send_voice",
            chat_id=chat_id,
            size=len(ogg_opus),
            duration=duration,
            message_thread_id=message_thread_id,
        )
        if not ogg_opus.startswith(b"OggS"):
            raise TelegramBadRequest("sendVoice", 400, "Bad Request: wrong file type")
        message_id = self._next_id(chat_id)
        self.voices.append((chat_id, ogg_opus))
        return message_id

    def send_message_draft(
        self,
        chat_id: int,
        draft_id: int,
        text: str,
        *,
        parse_mode: str | None = None,
        message_thread_id: int | None = None,
    ) -> None:
        """Record the draft (drafts are not messages: they are not in ``sent``)."""
        self._record(
            "send_message_draft",
            chat_id=chat_id,
            draft_id=draft_id,
            text=text,
            parse_mode=parse_mode,
            message_thread_id=message_thread_id,
        )

    def get_me(self) -> dict[str, Any]:
        """The bot's User, with ``has_topics_enabled`` as set."""
        self._record("get_me")
        return {"id": 1, "is_bot": True, "first_name": "Stepwise", "has_topics_enabled": self.topics_enabled}

    def create_forum_topic(self, chat_id: int, name: str) -> int:
        """Create a topic (refused, as Telegram does, when threaded mode is off, or in a group that is not a
        forum); return its thread id."""
        self._record("create_forum_topic", chat_id=chat_id, name=name)
        if not self.topics_enabled if chat_id > 0 else chat_id not in self.forums:
            raise TelegramBadRequest("createForumTopic", 400, "Bad Request: the chat is not a forum")
        thread = self._next_id(chat_id)  # the topic's first message (its service message) names it
        if thread == 1:  # 1 is a forum's General topic
            thread = self._next_id(chat_id)
        self.topics[(chat_id, thread)] = name
        return thread

    def edit_forum_topic(self, chat_id: int, message_thread_id: int, name: str) -> None:
        """Rename a topic."""
        self._record("edit_forum_topic", chat_id=chat_id, message_thread_id=message_thread_id, name=name)
        self.topics[(chat_id, message_thread_id)] = name

    def _next_id(self, chat_id: int) -> int:
        message_id = self._last_id.get(chat_id, 0) + 1
        self._last_id[chat_id] = message_id
        return message_id

    def answer_callback_query(self, callback_query_id: str, text: str | None = None) -> None:
        """Record the answer."""
        self._record("answer_callback_query", callback_query_id=callback_query_id, text=text)

    def edit_message_text(
        self,
        chat_id: int,
        message_id: int,
        text: str,
        *,
        parse_mode: str | None = None,
        reply_markup: InlineKeyboardMarkup | None = None,
        link_previews: bool = False,
        business_connection_id: str | None = None,
    ) -> None:
        """Apply the edit to the sent message; an unknown message raises ``TelegramBadRequest``, and so does
        a message sent through a business connection edited without that connection (or the reverse)."""
        self._record(
            "edit_message_text",
            chat_id=chat_id,
            message_id=message_id,
            text=text,
            parse_mode=parse_mode,
            reply_markup=reply_markup,
            link_previews=link_previews,
            business_connection_id=business_connection_id,
        )
        _check_text("editMessageText", text)
        for message in self.sent:
            same_connection = message.business_connection_id == business_connection_id
            if message.chat_id == chat_id and message.message_id == message_id and same_connection:
                message.text = text
                message.parse_mode = parse_mode
                message.reply_markup = reply_markup
                message.edits += 1
                return
        raise TelegramBadRequest("editMessageText", 400, "Bad Request: message to edit not found")

    def set_webhook(self, url: str, secret_token: str, allowed_updates: list[str]) -> None:
        """Record the webhook settings."""
        self._record("set_webhook", url=url, secret_token=secret_token, allowed_updates=allowed_updates)
        self.webhook = {"url": url, "secret_token": secret_token, "allowed_updates": list(allowed_updates)}

    def _record(self, method: str, **params: Any) -> None:
        for optional in ("message_thread_id", "business_connection_id"):
            if params.get(optional, 0) is None:  # recorded only when sent, as the Bot API gets it
                del params[optional]
        self.calls.append((method, params))
        pending = self._failures.get(method)
        if pending:
            raise pending.pop(0)


def _check_text(method: str, text: str) -> None:
    if not text.strip():
        raise TelegramBadRequest(method, 400, "Bad Request: message text is empty")
    if len(text) > _MAX_TEXT:
        raise TelegramBadRequest(method, 400, "Bad Request: message is too long")
