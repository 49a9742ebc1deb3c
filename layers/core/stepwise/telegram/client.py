"""The Telegram port (``TelegramClient``) and its Bot API adapter over urllib3
(``stepwise.aws.http_transport``).

Network failures are told apart by whether the request can have reached Telegram: a connection that was
never made (refused, unresolvable, connect timeout) is ``TelegramTransientError`` and always safe to repeat;
a request that went out without an answer coming back is ``TelegramDeliveryUncertainError`` when repeating
it would show the user something twice (``sendMessage``), and ``TelegramTransientError`` otherwise.
"""

from __future__ import annotations

import json
import logging
import time
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import quote

from urllib3.exceptions import ConnectTimeoutError, HTTPError, NewConnectionError
from urllib3.exceptions import TimeoutError as HttpTimeoutError

from stepwise.aws.http_transport import HttpTransport, Response, form_body, json_body
from stepwise.telegram.errors import (
    TelegramBadRequest,
    TelegramDeliveryUncertainError,
    TelegramError,
    TelegramForbidden,
    TelegramTransientError,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from stepwise.telegram.keyboard import ForceReply, InlineKeyboardMarkup

logger = logging.getLogger(__name__)

DEFAULT_BASE_URL = "https://api.telegram.org"
_REDACTED = "<redacted>"
_NOT_MODIFIED = "message is not modified"
TOPIC_GONE = "message thread not found"
# Calls that post something new (send*, copy*, forward*) show it twice when repeated, so a lost answer leaves
# their delivery uncertain; these two only show a state, and repeating them changes nothing.
_IDEMPOTENT_SENDS = frozenset({"sendChatAction", "sendMessageDraft"})
_NOT_IDEMPOTENT_PREFIXES = ("send", "copy", "forward")


def is_idempotent(method: str) -> bool:
    """False for methods that post something new into the chat each time they run (sendMessage...)."""
    return method in _IDEMPOTENT_SENDS or not method.startswith(_NOT_IDEMPOTENT_PREFIXES)


class TelegramClient(Protocol):
    """What the assistant needs from Telegram."""

    def send_message(
        self,
        chat_id: int,
        text: str,
        *,
        parse_mode: str | None = None,
        reply_markup: InlineKeyboardMarkup | ForceReply | None = None,
        message_thread_id: int | None = None,
        link_previews: bool = False,
        business_connection_id: str | None = None,
    ) -> int:
        """Send a text message (into the topic `message_thread_id`, if given) and return its message_id;
        Telegram builds no link preview (its servers fetch nothing) unless `link_previews`. With
        `business_connection_id` it goes out through that business connection, in its owner's name."""
        ...

    def send_chat_action(
        self, chat_id: int, action: str = "typing", *, message_thread_id: int | None = None
    ) -> None:
        """Show a chat action such as "typing"."""
        ...

    def send_voice(
        self,
        chat_id: int,
        ogg_opus: bytes,
        *,
        duration: int | None = None,
        message_thread_id: int | None = None,
    ) -> int:
        """Send a voice message (Ogg Opus) and return its message_id."""
        ...

    def answer_callback_query(self, callback_query_id: str, text: str | None = None) -> None:
        """Acknowledge an inline keyboard press."""
        ...

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
        """Replace the text (and keyboard) of a sent message, without a link preview unless `link_previews`;
        an unchanged text is not an error. A message sent through a business connection is edited with
        its `business_connection_id`."""
        ...

    def set_webhook(self, url: str, secret_token: str, allowed_updates: list[str]) -> None:
        """Register the webhook URL with its secret token."""
        ...

    def get_me(self) -> dict[str, Any]:
        """The bot's own User (`has_topics_enabled`: threaded mode is on in private chats)."""
        ...

    def create_forum_topic(self, chat_id: int, name: str) -> int:
        """Create a topic and return its thread id."""
        ...

    def edit_forum_topic(self, chat_id: int, message_thread_id: int, name: str) -> None:
        """Rename a topic."""
        ...


class BotApiClient:
    """``TelegramClient`` over HTTPS: ``POST {base_url}/bot{token}/{method}`` with a JSON body.

    ``connect_timeout_seconds`` bounds connecting; ``timeout_seconds`` bounds waiting for an answer, and
    ``send_timeout_seconds`` does so for calls that cannot be safely repeated (sendMessage): a slow answer
    is better awaited than abandoned and sent again. ``transport`` carries the HTTP (its own by default).
    """

    def __init__(
        self,
        token: str,
        base_url: str = DEFAULT_BASE_URL,
        *,
        transport: HttpTransport | None = None,
        timeout_seconds: float = 10.0,
        connect_timeout_seconds: float = 5.0,
        send_timeout_seconds: float = 20.0,
        max_retry_after_seconds: float = 30.0,
        max_rate_limit_waits: int = 3,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if not token:
            raise ValueError("token must not be empty")
        self._token = token
        self._base_url = base_url.rstrip("/")
        self._http = transport if transport is not None else HttpTransport()
        self._connect_timeout = connect_timeout_seconds
        self._read_timeout = timeout_seconds
        self._send_timeout = send_timeout_seconds
        self._max_retry_after = max_retry_after_seconds
        self._max_waits = max_rate_limit_waits
        self._sleep = sleep

    def __repr__(self) -> str:
        return f"BotApiClient(base_url={self._base_url!r})"

    def send_message(
        self,
        chat_id: int,
        text: str,
        *,
        parse_mode: str | None = None,
        reply_markup: InlineKeyboardMarkup | ForceReply | None = None,
        message_thread_id: int | None = None,
        link_previews: bool = False,
        business_connection_id: str | None = None,
    ) -> int:
        """Send a text message (into the topic `message_thread_id`, if given) and return its message_id; with
        `link_previews` False (the default) Telegram is told to build no link preview, so its servers fetch no
        link of the text. With `business_connection_id` it goes out through that business connection, in its
        owner's name (the parameter is sent only when given)."""
        result = self.call(
            "sendMessage",
            {
                "business_connection_id": business_connection_id,
                "chat_id": chat_id,
                "message_thread_id": message_thread_id,
                "text": text,
                "parse_mode": parse_mode,
                "link_preview_options": _previews(link_previews),
                "reply_markup": reply_markup.to_api() if reply_markup else None,
            },
        )
        if not isinstance(result, dict) or not isinstance(result.get("message_id"), int):
            raise TelegramError("sendMessage", None, "answer has no message_id")
        if message_thread_id is not None and result.get("is_topic_message") is not True:
            # Telegram has placed messages for a private topic outside it (a Bot API release in May 2026)
            logger.warning(
                "Telegram %s: the message sent to topic %s is not in it", "sendMessage", message_thread_id
            )
        return int(result["message_id"])

    def send_chat_action(
        self, chat_id: int, action: str = "typing", *, message_thread_id: int | None = None
    ) -> None:
        """Show a chat action such as "typing"."""
        self.call(
            "sendChatAction", {"chat_id": chat_id, "message_thread_id": message_thread_id, "action": action}
        )

    def send_voice(
        self,
        chat_id: int,
        ogg_opus: bytes,
        *,
        duration: int | None = None,
        message_thread_id: int | None = None,
    ) -> int:
        """Send a voice message (Ogg Opus, uploaded as multipart/form-data) and return its message_id."""
        result = self.call(
            "sendVoice",
            {"chat_id": chat_id, "message_thread_id": message_thread_id, "duration": duration},
            files={"voice": ("reply.ogg", ogg_opus, "audio/ogg")},
        )
        if not isinstance(result, dict) or not isinstance(result.get("message_id"), int):
            raise TelegramError("sendVoice", None, "answer has no message_id")
        return int(result["message_id"])

    def answer_callback_query(self, callback_query_id: str, text: str | None = None) -> None:
        """Acknowledge an inline keyboard press."""
        self.call("answerCallbackQuery", {"callback_query_id": callback_query_id, "text": text})

    def send_message_draft(
        self,
        chat_id: int,
        draft_id: int,
        text: str,
        *,
        parse_mode: str | None = None,
        message_thread_id: int | None = None,
    ) -> None:
        """Show (or update) a draft of a message being written, in a private chat; it is not a message."""
        params = {"chat_id": chat_id, "message_thread_id": message_thread_id, "draft_id": draft_id}
        self.call("sendMessageDraft", params | {"text": text, "parse_mode": parse_mode})

    def get_me(self) -> dict[str, Any]:
        """The bot's own User (`has_topics_enabled`: threaded mode is on in private chats)."""
        result = self.call("getMe", {})
        if not isinstance(result, dict):
            raise TelegramError("getMe", None, "answer is not a User")
        return result

    def create_forum_topic(self, chat_id: int, name: str) -> int:
        """Create a topic (in a private chat with threaded mode on, or a forum) and return its thread id."""
        result = self.call("createForumTopic", {"chat_id": chat_id, "name": name})
        if not isinstance(result, dict) or not isinstance(result.get("message_thread_id"), int):
            raise TelegramError("createForumTopic", None, "answer has no message_thread_id")
        return int(result["message_thread_id"])

    def edit_forum_topic(self, chat_id: int, message_thread_id: int, name: str) -> None:
        """Rename a topic."""
        self.call(
            "editForumTopic", {"chat_id": chat_id, "message_thread_id": message_thread_id, "name": name}
        )

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
        """Replace the text (and keyboard) of a sent message, without a link preview unless `link_previews`;
        an unchanged text is not an error. A message sent through a business connection is edited with
        its `business_connection_id` (sent only when given)."""
        params = {
            "business_connection_id": business_connection_id,
            "chat_id": chat_id,
            "message_id": message_id,
            "text": text,
            "parse_mode": parse_mode,
            "link_preview_options": _previews(link_previews),
            "reply_markup": reply_markup.to_api() if reply_markup else None,
        }
        try:
            self.call("editMessageText", params)
        except TelegramBadRequest as exc:
            if _NOT_MODIFIED not in exc.description.lower():
                raise

    def set_webhook(self, url: str, secret_token: str, allowed_updates: list[str]) -> None:
        """Register the webhook URL with its secret token."""
        self.call(
            "setWebhook",
            {"url": url, "secret_token": secret_token, "allowed_updates": list(allowed_updates)},
        )

    def download(self, file_id: str, max_bytes: int) -> bytes:
        """A file's bytes: ``getFile``, then ``GET {base_url}/file/bot{token}/{file_path}`` (bots may download
        files up to 20 MB; the link lasts at least an hour). ``TelegramBadRequest`` when the file has more
        than ``max_bytes``; network failures are ``TelegramTransientError`` (repeating is harmless)."""
        result = self.call("getFile", {"file_id": file_id})
        path = result.get("file_path") if isinstance(result, dict) else None
        if not isinstance(path, str) or not path:
            raise TelegramError("getFile", None, "answer has no file_path")
        size = result.get("file_size")
        if isinstance(size, int) and size > max_bytes:
            raise TelegramBadRequest("getFile", None, f"the file has {size} bytes, more than {max_bytes}")
        url = f"{self._base_url}/file/bot{self._token}/{quote(path, safe='/')}"
        try:
            return self._fetch(url, max_bytes)
        except HTTPError as exc:
            error = self._network_error("getFile", exc)
        raise error  # outside the except block: the original exception's text holds the URL (and the token)

    def _fetch(self, url: str, max_bytes: int) -> bytes:
        with self._http.request(
            "GET",
            url,
            connect_timeout=self._connect_timeout,
            read_timeout=self._read_timeout,
            stream=True,
        ) as response:
            if response.status >= 400:
                raise _classify("getFile", response.status, f"download failed (HTTP {response.status})")
            data = bytearray()
            for chunk in response.chunks(65_536):
                data += chunk
                if len(data) > max_bytes:
                    raise TelegramBadRequest("getFile", None, f"the file has more than {max_bytes} bytes")
            return bytes(data)

    def call(
        self,
        method: str,
        params: Mapping[str, Any],
        files: Mapping[str, tuple[str, bytes, str]] | None = None,
    ) -> Any:
        """Call any Bot API method (None params are omitted) and return its ``result``; with `files` (field:
        (file name, bytes, content type)) the request is multipart/form-data, as uploads must be."""
        body = {key: value for key, value in params.items() if value is not None}
        try:
            return self._call(method, body, files)
        except TelegramBadRequest as error:
            if "message_thread_id" not in body or not topic_gone(error):
                raise
            thread = body.pop("message_thread_id")
        logger.warning("Telegram %s: topic %s is gone; sending to the main chat", method, thread)
        if method in _IDEMPOTENT_SENDS:
            return True  # typing or a draft for a deleted topic: nothing to show anywhere
        if isinstance(body.get("text"), str):
            body["text"] = gone_topic_note(thread, body.get("parse_mode")) + body["text"]
        return self._call(method, body, files)

    def _call(
        self,
        method: str,
        body: dict[str, Any],
        files: Mapping[str, tuple[str, bytes, str]] | None = None,
    ) -> Any:
        url = f"{self._base_url}/bot{self._token}/{method}"
        waits = 0
        while True:
            response = self._post(method, url, body, files)
            status, payload = self._decode(method, response)
            if status < 400 and payload.get("ok") is True:
                return payload.get("result")
            description = self._redact(str(payload.get("description") or f"HTTP {status}"))
            if status == 429:
                retry_after = _retry_after(payload)
                if retry_after <= self._max_retry_after and waits < self._max_waits:
                    waits += 1
                    logger.warning("Telegram %s rate limited, waiting %ss", method, retry_after)
                    self._sleep(retry_after)
                    continue
                raise TelegramTransientError(method, status, description, retry_after=retry_after)
            raise _classify(method, status, description)

    def _post(
        self,
        method: str,
        url: str,
        body: dict[str, Any],
        files: Mapping[str, tuple[str, bytes, str]] | None = None,
    ) -> Response:
        read_timeout = self._read_timeout if is_idempotent(method) else self._send_timeout
        if files:
            fields = {
                key: value if isinstance(value, str) else json.dumps(value) for key, value in body.items()
            }
            payload, headers = form_body(fields, files)
        else:
            payload, headers = json_body(body)
        try:
            return self._http.request(
                "POST",
                url,
                connect_timeout=self._connect_timeout,
                read_timeout=read_timeout,
                headers=headers,
                body=payload,
            )
        except HTTPError as exc:
            error = self._network_error(method, exc)
        # Raised outside the except block so the original exception (its text holds the URL
        # and so the token) is not chained into tracebacks.
        raise error

    def _network_error(self, method: str, exc: HTTPError) -> TelegramTransientError:
        """Transient when the request cannot have reached Telegram or may be repeated; else uncertain."""
        detail = self._redact(_describe(exc))
        if _never_sent(exc):
            return TelegramTransientError(method, None, f"could not connect, nothing was sent: {detail}")
        timed_out = isinstance(exc, HttpTimeoutError)
        if not is_idempotent(method):
            what = "no answer in time" if timed_out else f"connection lost before the answer ({detail})"
            logger.warning("Telegram %s: %s; it may have been delivered", method, what)
            return TelegramDeliveryUncertainError(method, None, f"{what}; Telegram may have delivered it")
        if timed_out:
            return TelegramTransientError(method, None, "request timed out")
        return TelegramTransientError(method, None, f"network error: {detail}")

    def _decode(self, method: str, response: Response) -> tuple[int, dict[str, Any]]:
        status = response.status
        try:
            payload = response.json()
        except ValueError:
            payload = None
        if not isinstance(payload, dict):
            description = f"unexpected non-JSON answer (HTTP {status})"
            if status == 429:
                raise TelegramTransientError(method, status, description)
            raise _classify(method, status, description)
        error_code = payload.get("error_code")
        if payload.get("ok") is not True and isinstance(error_code, int):
            status = error_code
        return status, payload

    def _redact(self, text: str) -> str:
        for form in (self._token, quote(self._token, safe="")):
            text = text.replace(form, _REDACTED)
        return text


def _previews(shown: bool) -> dict[str, bool] | None:
    """`link_preview_options`: previews off, or (when shown) Telegram's default, the first link's."""
    return None if shown else {"is_disabled": True}


def topic_gone(error: TelegramBadRequest) -> bool:
    """Telegram no longer knows the topic (the user deleted it)."""
    return TOPIC_GONE in error.description.lower()


def gone_topic_note(thread: object, parse_mode: object = None) -> str:
    """The line before a message that went to the main chat because its topic was deleted."""
    note = f"(For topic #{thread}, which was deleted:)"
    return (f"<i>{note}</i>" if parse_mode == "HTML" else note) + "\n\n"


def _describe(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


def _never_sent(exc: BaseException) -> bool:
    """True when the failure happened while connecting (refused, unresolvable, connect timeout)."""
    pending: list[object] = [exc]
    seen: set[int] = set()
    while pending:
        current = pending.pop()
        if not isinstance(current, BaseException) or id(current) in seen:
            continue
        seen.add(id(current))
        if isinstance(current, (NewConnectionError, ConnectTimeoutError)):
            return True
        # A wrapping error keeps its cause in .reason (MaxRetryError), its arguments or its chain.
        pending += [*current.args, getattr(current, "reason", None), current.__cause__, current.__context__]
    return False


def _retry_after(payload: Mapping[str, Any]) -> float:
    parameters = payload.get("parameters")
    value = parameters.get("retry_after") if isinstance(parameters, dict) else None
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0:
        return float(value)
    return 1.0


def _classify(method: str, status: int, description: str) -> TelegramError:
    if status >= 500:
        return TelegramTransientError(method, status, description)
    if status == 400:
        return TelegramBadRequest(method, status, description)
    if status in (401, 403):
        return TelegramForbidden(method, status, description)
    return TelegramError(method, status, description)
