"""``FakeBotApi``: a Telegram Bot API stand-in served over real HTTP on 127.0.0.1.

Every call is validated against the Bot API spec (``bot_api_spec.json``, a copy of the
telegram-bot-api-spec ``api.json`` reduced to the methods Stepwise uses) and, for texts with
``parse_mode`` HTML, against Telegram's HTML rules. Accepted calls are recorded; errors can be
injected with ``fail_next`` and ``reject_html_next``, late answers with ``slow_next``. Files registered with
``add_file`` are answered by ``getFile`` and downloaded from ``/file/bot<token>/<file_path>``, as from
Telegram (up to 20 MB). Topics: ``message_thread_id`` is checked as Telegram does (a topic the chat does
not have, or a forum's General topic 1, is "Bad Request: message thread not found"); ``createForumTopic``
opens one (refused in a private chat while ``topics_enabled``, getMe's ``has_topics_enabled``, is off, and
in a group that is not one of the ``forums``),
``add_topic`` opens one as its user would and ``delete_topic`` deletes one.

Business connections: a test (or the chat) registers one with ``add_business_connection`` (its id, its owner,
whether it is enabled and may reply) and a contact's last message in the owner's account with
``contact_wrote``. ``sendMessage`` with ``business_connection_id`` then succeeds only through a known,
enabled connection that may reply, to a private chat (not the owner's own) whose contact wrote within the last
24 hours on the server's clock (``now``; ``advance_clock`` moves it), and otherwise answers as Telegram does
(see the ``BUSINESS_*`` answers below). What went out through a connection is kept apart from the bot's own
messages: ``business_messages``. Standard library only.
"""

from __future__ import annotations

import hashlib
import html
import json
import logging
import re
import threading
import time
from collections.abc import Callable
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

from stepwise_local.fake_speech import parse_multipart
from stepwise_local.loopback import ApiServer, LoopbackServer

logger = logging.getLogger(__name__)

SPEC_PATH = Path(__file__).with_name("bot_api_spec.json")
MAX_TEXT_LENGTH = 4096
MAX_CALLBACK_DATA_BYTES = 64
MAX_DOWNLOAD_BYTES = 20 * 1024 * 1024  # Telegram: bots download files up to 20 MB
MAX_VOICE_BYTES = 50 * 1024 * 1024  # sendVoice: voice messages up to 50 MB
CHAT_ACTIONS = frozenset(
    {
        "typing",
        "upload_photo",
        "record_video",
        "upload_video",
        "record_voice",
        "upload_voice",
        "upload_document",
        "choose_sticker",
        "find_location",
        "record_video_note",
        "upload_video_note",
    }
)
PARSE_MODES = frozenset({"HTML", "MarkdownV2", "Markdown"})
_SIMPLE_TAGS = frozenset({"b", "strong", "i", "em", "u", "ins", "s", "strike", "del", "tg-spoiler", "pre"})
_ENTITY = re.compile(r"&(?:(lt|gt|amp|quot)|#([0-9]{1,7})|#[xX]([0-9a-fA-F]{1,6}));")
_NAMED_ENTITIES = {"lt": "<", "gt": ">", "amp": "&", "quot": '"'}
_START_TAG = re.compile(
    r"<([a-zA-Z][a-zA-Z0-9-]*)((?:\s+[^\s=>]+(?:\s*=\s*(?:\"[^\"]*\"|'[^']*'|[^\s>]+))?)*)\s*>"
)
_ATTRIBUTE = re.compile(r"([^\s=>]+)(?:\s*=\s*(?:\"([^\"]*)\"|'([^']*)'|([^\s>]+)))?")
_END_TAG = re.compile(r"</([a-zA-Z][a-zA-Z0-9-]*)\s*>")
_SCALAR_TYPES = frozenset({"Integer", "String", "Boolean", "Float"})
_SECRET_TOKEN = re.compile(r"^[A-Za-z0-9_-]{1,256}$")
# BotCommand: 1-32 lowercase English letters, digits and underscores; a description of 1-256 characters.
_BOT_COMMAND = re.compile(r"^[a-z0-9_]{1,32}$")
MAX_BOT_COMMANDS = 100
MAX_COMMAND_DESCRIPTION = 256
MAX_TOPIC_NAME = 128
GENERAL_TOPIC = 1
THREAD_NOT_FOUND = "Bad Request: message thread not found"
# A business bot may answer a contact only within 24 hours of the contact's last message.
BUSINESS_REPLY_WINDOW_SECONDS = 24 * 3600
# Telegram's answers to a business send it refuses. An unknown connection: TDLib's check (the Bot API server
# lowers the first letter); past the 24 hours: the MTProto error documented for messages.sendMessage, passed
# through by the Bot API as the name. Not documented for the Bot API: a disabled connection (taken here as
# Telegram's BUSINESS_CONNECTION_INVALID) and a connection without the right to reply (MTProto's 403
# BOT_ACCESS_FORBIDDEN, an operation the connection does not allow).
BUSINESS_CONNECTION_NOT_FOUND = "Bad Request: business connection not found"
BUSINESS_CONNECTION_DISABLED = "Bad Request: BUSINESS_CONNECTION_INVALID"
BUSINESS_CANNOT_REPLY = "Forbidden: BOT_ACCESS_FORBIDDEN"
BUSINESS_PAST_WINDOW = "Bad Request: BUSINESS_PEER_USAGE_MISSING"
BUSINESS_NOT_PRIVATE = "Bad Request: chat must be a private chat"
BUSINESS_TO_SELF = "Bad Request: messages must not be sent to self"


class BotApiError(Exception):
    """An error answer: HTTP status and Telegram-like description."""

    def __init__(self, status: int, description: str, retry_after: int | None = None) -> None:
        super().__init__(description)
        self.status = status
        self.description = description
        self.retry_after = retry_after


class HtmlParseError(ValueError):
    """The text is not valid Telegram HTML."""


def load_spec(path: Path = SPEC_PATH) -> dict[str, dict[str, Any]]:
    """Return the ``methods`` table of the bundled Bot API spec."""
    methods: dict[str, dict[str, Any]] = json.loads(path.read_text(encoding="utf-8"))["methods"]
    return methods


def load_types(path: Path = SPEC_PATH) -> dict[str, dict[str, Any]]:
    """Return the ``types`` table of the bundled Bot API spec (the parameter objects the fake checks)."""
    types: dict[str, dict[str, Any]] = json.loads(path.read_text(encoding="utf-8"))["types"]
    return types


def check_link_preview_options(value: Any, spec: dict[str, Any]) -> None:
    """Refuse a ``link_preview_options`` that is not a LinkPreviewOptions object with fields of their types
    (unknown fields are ignored, as Telegram ignores them)."""
    if value is None:
        return
    if not isinstance(value, dict):
        raise _bad("Bad Request: can't parse link preview options JSON object")
    for field in spec["fields"]:
        given = value.get(field["name"])
        kind = field["types"][0]
        if given is not None and not (
            isinstance(given, bool) if kind == "Boolean" else isinstance(given, str)
        ):
            raise _bad("Bad Request: can't parse link preview options JSON object")


def parse_telegram_html(text: str) -> str:
    """Return the visible text of Telegram HTML, or raise ``HtmlParseError`` as Telegram would."""
    out: list[str] = []
    stack: list[str] = []
    index = 0
    while index < len(text):
        char = text[index]
        if char == "&":
            entity = _ENTITY.match(text, index)
            if entity is None:
                raise HtmlParseError(f'Character "&" is reserved at byte offset {_offset(text, index)}')
            out.append(_decode_entity(entity))
            index = entity.end()
        elif char == "<":
            index = _parse_tag(text, index, stack)
        else:
            out.append(char)
            index += 1
    if stack:
        raise HtmlParseError(f'Can\'t find end tag corresponding to start tag "{stack[-1]}"')
    return "".join(out)


def _parse_tag(text: str, index: int, stack: list[str]) -> int:
    offset = _offset(text, index)
    if text.startswith("</", index):
        end = _END_TAG.match(text, index)
        if end is None:
            raise HtmlParseError(f"Unclosed end tag at byte offset {offset}")
        name = end.group(1).lower()
        if not stack:
            raise HtmlParseError(f'Unexpected end tag "{name}" at byte offset {offset}')
        if stack[-1] != name:
            raise HtmlParseError(
                f'Unmatched end tag at byte offset {offset}, expected "</{stack[-1]}>", found "</{name}>"'
            )
        stack.pop()
        return end.end()
    start = _START_TAG.match(text, index)
    if start is None:
        raise HtmlParseError(f'Character "<" is reserved or the tag is malformed at byte offset {offset}')
    name = start.group(1).lower()
    attributes = _parse_attributes(start.group(2), offset)
    _check_tag(name, attributes, offset)
    stack.append(name)
    return start.end()


def _parse_attributes(raw: str, offset: int) -> dict[str, str]:
    attributes: dict[str, str] = {}
    for match in _ATTRIBUTE.finditer(raw):
        value = next((group for group in match.groups()[1:] if group is not None), "")
        if "<" in value or any(_ENTITY.match(value, m.start()) is None for m in re.finditer("&", value)):
            raise HtmlParseError(f"Bad attribute value at byte offset {offset}")
        attributes[match.group(1).lower()] = html.unescape(value)
    return attributes


def _check_tag(name: str, attributes: dict[str, str], offset: int) -> None:
    allowed: set[str]
    if name in _SIMPLE_TAGS:
        allowed = set()
    elif name == "a":
        allowed = {"href"}
    elif name == "code":
        allowed = {"class"}
        if not attributes.get("class", "language-").startswith("language-"):
            raise HtmlParseError(f'Tag "code" may only have class "language-*" at byte offset {offset}')
    elif name == "span":
        allowed = {"class"}
        if attributes.get("class") != "tg-spoiler":
            raise HtmlParseError(f'Tag "span" must have class "tg-spoiler" at byte offset {offset}')
    elif name == "blockquote":
        allowed = {"expandable"}
    elif name == "tg-emoji":
        allowed = {"emoji-id"}
        if not attributes.get("emoji-id"):
            raise HtmlParseError(f'Tag "tg-emoji" must have attribute "emoji-id" at byte offset {offset}')
    else:
        raise HtmlParseError(f'Unsupported start tag "{name}" at byte offset {offset}')
    unknown = set(attributes) - allowed
    if unknown:
        raise HtmlParseError(
            f'Unsupported attribute "{sorted(unknown)[0]}" of tag "{name}" at byte offset {offset}'
        )


def _decode_entity(match: re.Match[str]) -> str:
    named, decimal, hexadecimal = match.groups()
    if named:
        return _NAMED_ENTITIES[named]
    code = int(decimal) if decimal else int(hexadecimal, 16)
    if not 0 < code <= 0x10FFFF or 0xD800 <= code <= 0xDFFF:
        return "\ufffd"
    return chr(code)


def _offset(text: str, index: int) -> int:
    return len(text[:index].encode("utf-8"))


def _utf16_length(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


class FakeBotApi(LoopbackServer):
    """A Telegram Bot API stand-in on ``http://127.0.0.1:<ephemeral port>``.

    ``on_message`` is called from a server thread with each accepted sendMessage or editMessageText:
    the call's params plus ``"method"`` and the ``"message_id"``.
    """

    thread_name = "fake-bot-api"

    def __init__(self, token: str, *, on_message: Callable[[dict[str, Any]], None] | None = None) -> None:
        self.token = token
        self._on_message = on_message
        self._spec = load_spec()
        self._types = load_types()
        self._names = {name.lower(): name for name in self._spec}
        self._lock = threading.Lock()
        self._calls: list[dict[str, Any]] = []
        self._attempts: list[dict[str, Any]] = []
        self._messages: list[dict[str, Any]] = []
        self._last_message_id: dict[Any, int] = {}
        self._faults: dict[str, list[BotApiError]] = {}
        self._html_rejections = 0
        self._delays: dict[str, list[float]] = {}
        self.webhook: dict[str, Any] | None = None
        self._files: dict[str, tuple[str, bytes]] = {}  # file_id -> (file_path, bytes)
        self.downloads: list[str] = []  # file paths downloaded, in order
        self.commands: list[dict[str, Any]] = []  # the command menu, as setMyCommands left it
        self.menu_button: dict[str, Any] | None = (
            None  # the default menu button, as setChatMenuButton left it
        )
        self.uploads: dict[str, bytes] = {}  # uploaded files (sendVoice) by sha256
        self._voices: list[dict[str, Any]] = []
        self.topics_enabled = True  # getMe's has_topics_enabled: threaded mode in private chats
        self.reads_all_group_messages = False  # getMe's can_read_all_group_messages: privacy mode off
        self.forums: set[int] = set()  # the groups that are forums (topics on); the others have none
        self._topics: dict[tuple[int, int], str] = {}  # (chat, thread) -> name, while the topic exists
        self._business_connections: dict[str, dict[str, Any]] = {}  # id -> user_id, is_enabled, can_reply
        self._contact_wrote_at: dict[tuple[int, int], float] = {}  # (owner, chat) -> contact's last message
        self._business_messages: list[dict[str, Any]] = []
        self._clock_offset = 0.0

    def handler(self) -> type[BaseHTTPRequestHandler]:
        return _Handler

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT`` (the server must be started)."""
        return self.root_url

    # -- inspection --------------------------------------------------------------------------------

    def calls(self, method: str | None = None) -> list[dict[str, Any]]:
        """Accepted calls, in order: ``{"method": ..., "params": {...}}``."""
        with self._lock:
            return [_copy(call) for call in self._calls if method is None or call["method"] == method]

    def attempts(self, method: str | None = None) -> list[dict[str, Any]]:
        """Every request that reached a known method, accepted or not, with its answered ``status``."""
        with self._lock:
            return [_copy(a) for a in self._attempts if method is None or a["method"] == method]

    def messages(self, chat_id: int | None = None) -> list[dict[str, Any]]:
        """Sent messages (sendMessage params plus ``message_id``), in order, with edits applied."""
        with self._lock:
            return [_copy(m) for m in self._messages if chat_id is None or m["chat_id"] == chat_id]

    def business_messages(
        self, chat_id: int | None = None, connection_id: str | None = None
    ) -> list[dict[str, Any]]:
        """Messages sent through a business connection (sendMessage params plus ``message_id``), in order,
        with edits applied; never in ``messages``."""
        with self._lock:
            return [
                _copy(m)
                for m in self._business_messages
                if chat_id in (None, m["chat_id"]) and connection_id in (None, m["business_connection_id"])
            ]

    def voices(self, chat_id: int | None = None) -> list[dict[str, Any]]:
        """Sent voice messages (sendVoice params with the upload's `sha256`, `size` and `message_id`), in
        order; `voice_bytes(message)` is the audio."""
        with self._lock:
            return [_copy(v) for v in self._voices if chat_id is None or v["chat_id"] == chat_id]

    def voice_bytes(self, voice: dict[str, Any]) -> bytes:
        """The Ogg Opus bytes of a sent voice message."""
        return self.uploads[voice["voice"]["sha256"]]

    def keep_upload(self, data: bytes, file_name: str, content_type: str | None) -> dict[str, Any]:
        """Keep an uploaded file; the call's parameter becomes a small description of it (InputFile)."""
        digest = hashlib.sha256(data).hexdigest()
        with self._lock:
            self.uploads[digest] = bytes(data)
        return {"upload": file_name, "sha256": digest, "size": len(data), "content_type": content_type or ""}

    def drafts(self, chat_id: int | None = None) -> list[dict[str, Any]]:
        """Accepted sendMessageDraft params, in order: drafts are previews, never in ``messages``."""
        return [
            c["params"] for c in self.calls("sendMessageDraft") if chat_id in (None, c["params"]["chat_id"])
        ]

    def previews_links(self, call: dict[str, Any]) -> bool:
        """Whether Telegram would build a link preview for a sendMessage or editMessageText call's params
        (fetching a link of its text from Telegram's servers): its previews are not disabled and it has a
        link, an ``<a href>`` or an address in the text."""
        options = call.get("link_preview_options") or {}
        if options.get("is_disabled") is True:
            return False
        text = str(call.get("text") or "")
        return bool(re.search(r"<a\s+href=|https?://|www\.|\b[\w-]+\.(?:com|org|net|io)\b", text))

    def text_of(self, message: dict[str, Any]) -> str:
        """The visible text of a message: HTML tags removed and entities unescaped."""
        text = str(message.get("text", ""))
        if message.get("parse_mode") == "HTML":
            return parse_telegram_html(text)
        return text

    def add_file(self, data: bytes, file_path: str, file_id: str | None = None) -> str:
        """Make a file available to getFile and downloads (as if a user had sent it); returns its file_id."""
        with self._lock:
            file_id = file_id or f"file-{len(self._files) + 1:04d}-{file_path.replace('/', '-')}"
            self._files[file_id] = (file_path, bytes(data))
        return file_id

    def file_content(self, token: str, file_path: str) -> bytes | None:
        """The bytes served at ``/file/bot<token>/<file_path>``, or None (404)."""
        if token != self.token:
            return None
        with self._lock:
            for path, data in self._files.values():
                if path == file_path:
                    self.downloads.append(file_path)
                    return data
        return None

    def add_topic(self, chat_id: int, name: str) -> int:
        """Open a topic as its user would (Telegram's service message takes a message id, which names it);
        returns its message_thread_id."""
        with self._lock:
            return self._open_topic(chat_id, name)

    def delete_topic(self, chat_id: int, thread: int) -> None:
        """The user deletes the topic: Telegram no longer knows its thread."""
        with self._lock:
            self._topics.pop((chat_id, thread), None)

    def topics(self, chat_id: int) -> dict[int, str]:
        """The chat's topics: thread -> name."""
        with self._lock:
            return {thread: name for (chat, thread), name in self._topics.items() if chat == chat_id}

    def _open_topic(self, chat_id: int, name: str) -> int:
        thread = self._last_message_id.get(chat_id, 0) + 1
        if thread == GENERAL_TOPIC:
            thread += 1
        self._last_message_id[chat_id] = thread
        self._topics[(chat_id, thread)] = name
        return thread

    # -- business connections and the server's clock ----------------------------------------------

    def now(self) -> float:
        """The server's clock (epoch seconds): the real time, moved by ``advance_clock``."""
        return time.time() + self._clock_offset

    def advance_clock(self, seconds: float) -> None:
        """Move the server's clock forward (the 24 hours a business bot may reply in pass at once)."""
        with self._lock:
            self._clock_offset += seconds

    def add_business_connection(
        self, connection_id: str, owner_id: int, *, enabled: bool = True, can_reply: bool = True
    ) -> None:
        """Connect the bot to `owner_id`'s account (or change the connection: disabled, or its right to reply
        taken away)."""
        with self._lock:
            self._business_connections[connection_id] = {
                "user_id": owner_id,
                "is_enabled": enabled,
                "can_reply": can_reply,
            }

    def contact_wrote(self, connection_id: str, chat_id: int, at: float | None = None) -> None:
        """The contact of `chat_id` wrote to the connection's owner (at `at`, or now on the server's clock):
        the bot may answer in that chat for 24 hours."""
        with self._lock:
            owner = self._business_connections[connection_id]["user_id"]
            self._contact_wrote_at[(owner, chat_id)] = self.now() if at is None else at

    # -- fault injection ---------------------------------------------------------------------------

    def fail_next(
        self,
        method: str,
        status: int,
        description: str = "Injected failure",
        retry_after: int | None = None,
        times: int = 1,
    ) -> None:
        """Answer the next ``times`` calls of ``method`` with this error (429 carries retry_after)."""
        if status == HTTPStatus.TOO_MANY_REQUESTS and retry_after is None:
            retry_after = 1
        error = BotApiError(status, description, retry_after)
        with self._lock:
            self._faults.setdefault(self._canonical(method) or method, []).extend([error] * times)

    def clear_faults(self) -> None:
        """Forget injected failures not yet used."""
        with self._lock:
            self._faults.clear()
            self._html_rejections = 0

    def reject_html_next(self, times: int = 1) -> None:
        """Make the next ``times`` sendMessage calls with parse_mode HTML fail to parse entities."""
        with self._lock:
            self._html_rejections += times

    def slow_next(self, method: str, seconds: float, times: int = 1) -> None:
        """Answer the next ``times`` calls of ``method`` only after ``seconds``.

        The call takes effect at once (a sent message is recorded and shown): like Telegram when the
        request arrived but its answer is late, so a client that gives up cannot know what happened.
        """
        with self._lock:
            self._delays.setdefault(self._canonical(method) or method, []).extend([seconds] * times)

    # -- request handling (called from the server threads) -----------------------------------------

    def answer(
        self, command: str, path: str, content_type: str | None, raw: bytes
    ) -> tuple[int, dict[str, Any] | bytes]:
        """Answer one HTTP request (`command` GET or POST of `path`, its body `raw`): a Bot API call's status
        and JSON body, or a file's bytes. The HTTP server answers with it, and so can an in-process
        transport (tests/support/in_process_http.py)."""
        url = urlsplit(path)
        download = re.fullmatch(r"/file/bot([^/]+)/(.+)", url.path)
        if download is not None and command == "GET":
            data = self.file_content(download.group(1), unquote(download.group(2)))
            if data is None:
                return HTTPStatus.NOT_FOUND, {"ok": False, "error_code": 404, "description": "Not Found"}
            return HTTPStatus.OK, data
        match = re.fullmatch(r"/bot([^/]+)/([A-Za-z]+)", url.path)
        if match is None:
            return HTTPStatus.NOT_FOUND, {"ok": False, "error_code": 404, "description": "Not Found"}
        try:
            params = {**dict(parse_qsl(url.query)), **self._params(content_type, raw)}
        except (ValueError, UnicodeDecodeError):
            return HTTPStatus.BAD_REQUEST, _error(BotApiError(400, "Bad Request: can't parse JSON"))[1]
        return self.handle(match.group(1), match.group(2), params)

    def _params(self, content_type: str | None, raw: bytes) -> dict[str, Any]:
        """A call's parameters from its body: JSON, a form, or multipart (uploads kept aside by digest)."""
        if not raw:
            return {}
        kind = (content_type or "").split(";")[0].strip().lower()
        if kind == "application/x-www-form-urlencoded":
            return dict(parse_qsl(raw.decode("utf-8"), keep_blank_values=True))
        if kind == "multipart/form-data":
            params: dict[str, Any] = {}
            for name, part in parse_multipart(content_type or "", raw).items():
                if part.file_name is None:
                    params[name] = part.text
                else:
                    params[name] = self.keep_upload(part.data, part.file_name, part.content_type)
            return params
        body = json.loads(raw.decode("utf-8"))
        if not isinstance(body, dict):
            raise ValueError("body is not a JSON object")
        return body

    def handle(self, token: str, method_name: str, params: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        """Answer one call: ``(HTTP status, JSON body)``."""
        if token != self.token:
            return _error(BotApiError(HTTPStatus.UNAUTHORIZED, "Unauthorized"))
        method = self._canonical(method_name)
        if method is None:
            return _error(BotApiError(HTTPStatus.NOT_FOUND, "Not Found"))
        with self._lock:
            delays = self._delays.get(method)
            delay = delays.pop(0) if delays else 0.0
        try:
            with self._lock:
                result = self._dispatch(method, params)
            status: int = HTTPStatus.OK
            body: dict[str, Any] = {"ok": True, "result": result}
        except BotApiError as error:
            status, body = _error(error)
        with self._lock:
            self._attempts.append({"method": method, "params": _copy(params), "status": int(status)})
        if status == HTTPStatus.OK and method in ("sendMessage", "editMessageText", "sendVoice"):
            self._notify(method, params, body["result"])
        if delay:
            time.sleep(delay)  # the call has taken effect; only its answer is late
        return int(status), body

    def _dispatch(self, method: str, params: dict[str, Any]) -> Any:
        faults = self._faults.get(method)
        if faults:
            raise faults.pop(0)
        params = self._validate_fields(method, params)
        self._check_thread(method, params)
        handler = getattr(self, f"_do_{_snake(method)}")
        result = handler(params)
        self._calls.append({"method": method, "params": _copy(params)})
        return result

    def _validate_fields(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        fields = {field["name"]: field for field in self._spec[method]["fields"]}
        for name in params:
            if name not in fields:
                raise _bad(f'Bad Request: unknown parameter "{name}"')
        for name, field in fields.items():
            if field["required"] and params.get(name) in (None, ""):
                raise _bad(f'Bad Request: parameter "{name}" is required')
        return {name: _coerce(name, value, fields[name]["types"]) for name, value in params.items()}

    def _canonical(self, method: str) -> str | None:
        return self._names.get(method.lower())

    def _notify(self, method: str, params: dict[str, Any], result: Any) -> None:
        if self._on_message is None:
            return
        message_id = result.get("message_id") if isinstance(result, dict) else params.get("message_id")
        try:
            self._on_message({**_copy(params), "method": method, "message_id": message_id})
        except Exception:
            logger.exception("on_message callback failed")

    # -- methods -----------------------------------------------------------------------------------

    def _do_get_me(self, params: dict[str, Any]) -> dict[str, Any]:
        return self._bot_user() | {
            "can_join_groups": True,
            "can_read_all_group_messages": self.reads_all_group_messages,
            "supports_inline_queries": False,
            "has_topics_enabled": self.topics_enabled,
            "allows_users_to_create_topics": self.topics_enabled,
        }

    def _do_create_forum_topic(self, params: dict[str, Any]) -> dict[str, Any]:
        chat_id = params["chat_id"]
        private = isinstance(chat_id, int) and chat_id > 0
        if (private and not self.topics_enabled) or (not private and chat_id not in self.forums):
            raise _bad("Bad Request: the chat is not a forum")
        name = str(params["name"])
        if not 1 <= len(name) <= MAX_TOPIC_NAME:
            raise _bad(
                "Bad Request: TOPIC_TITLE_EMPTY" if not name else "Bad Request: topic name is too long"
            )
        thread = self._open_topic(chat_id, name)
        return {"message_thread_id": thread, "name": name, "icon_color": params.get("icon_color", 7322096)}

    def _do_edit_forum_topic(self, params: dict[str, Any]) -> bool:
        name = params.get("name")
        if name is not None and len(str(name)) > MAX_TOPIC_NAME:
            raise _bad("Bad Request: topic name is too long")
        key = (params["chat_id"], params["message_thread_id"])
        if name and self._topics[key] == name:
            raise _bad("Bad Request: TOPIC_NOT_MODIFIED")
        if name:
            self._topics[key] = str(name)
        return True

    def _do_set_webhook(self, params: dict[str, Any]) -> bool:
        secret = params.get("secret_token")
        if secret is not None and not _SECRET_TOKEN.match(str(secret)):
            raise _bad("Bad Request: secret token contains unallowed characters")
        self.webhook = dict(params)
        return True

    def _do_set_chat_menu_button(self, params: dict[str, Any]) -> bool:
        button = params.get("menu_button") or {"type": "default"}
        kind = button.get("type") if isinstance(button, dict) else None
        if kind not in ("commands", "web_app", "default"):
            raise _bad("Bad Request: can't parse menu button")
        if kind == "web_app":
            _check_web_app(button.get("web_app"))
            if not str(button.get("text") or "").strip():
                raise _bad("Bad Request: menu button text is empty")
        if params.get("chat_id") is None:
            self.menu_button = _copy(button)
        return True

    def _do_set_my_commands(self, params: dict[str, Any]) -> bool:
        commands = params["commands"]
        if len(commands) > MAX_BOT_COMMANDS:
            raise _bad("Bad Request: too many commands")
        for command in commands:
            if not isinstance(command, dict) or "command" not in command or "description" not in command:
                raise _bad("Bad Request: can't parse BotCommand")
            if not _BOT_COMMAND.match(str(command["command"])):
                raise _bad("Bad Request: BOT_COMMAND_INVALID")
            if not 1 <= len(str(command["description"]).strip()) <= MAX_COMMAND_DESCRIPTION:
                raise _bad("Bad Request: command description must be non-empty and at most 256 characters")
        self.commands = _copy(commands)
        return True

    def _do_delete_webhook(self, params: dict[str, Any]) -> bool:
        self.webhook = None
        return True

    def _do_get_file(self, params: dict[str, Any]) -> dict[str, Any]:
        stored = self._files.get(str(params["file_id"]))
        if stored is None:
            raise _bad("Bad Request: invalid file_id")
        path, data = stored
        if len(data) > MAX_DOWNLOAD_BYTES:
            raise _bad("Bad Request: file is too big")
        file_id = params["file_id"]
        return {
            "file_id": file_id,
            "file_unique_id": f"u-{file_id}",
            "file_size": len(data),
            "file_path": path,
        }

    def _do_send_chat_action(self, params: dict[str, Any]) -> bool:
        if params["action"] not in CHAT_ACTIONS:
            raise _bad("Bad Request: wrong parameter action in request")
        return True

    def _do_answer_callback_query(self, params: dict[str, Any]) -> bool:
        if len(str(params.get("text") or "")) > 200:
            raise _bad("Bad Request: MESSAGE_TOO_LONG")
        return True

    def _do_send_message_draft(self, params: dict[str, Any]) -> bool:
        if params["chat_id"] < 0:
            raise _bad("Bad Request: message drafts can be sent only to private chats")
        if params["draft_id"] == 0:
            raise _bad("Bad Request: draft_id must be non-zero")
        self._visible_text(params, allow_empty=True)
        return True

    def _do_send_message(self, params: dict[str, Any]) -> dict[str, Any]:
        if params.get("business_connection_id") is not None:
            return self._send_business_message(params)
        if params.get("parse_mode") == "HTML" and self._html_rejections > 0:
            self._html_rejections -= 1
            raise BotApiError(
                HTTPStatus.BAD_REQUEST,
                "Bad Request: can't parse entities: injected rejection at byte offset 0",
            )
        text = self._visible_text(params)
        _check_reply_markup(params.get("reply_markup"))
        check_link_preview_options(params.get("link_preview_options"), self._types["LinkPreviewOptions"])
        chat_id = params["chat_id"]
        message_id = self._last_message_id.get(chat_id, 0) + 1
        self._last_message_id[chat_id] = message_id
        self._messages.append({**_copy(params), "message_id": message_id})
        sent = self._message_object(chat_id, message_id, text, params.get("reply_markup"))
        if params.get("message_thread_id") is not None:
            sent |= {"message_thread_id": params["message_thread_id"], "is_topic_message": True}
        return sent

    def _do_send_voice(self, params: dict[str, Any]) -> dict[str, Any]:
        voice = params["voice"]
        if not isinstance(voice, dict) or voice.get("sha256") not in self.uploads:
            raise _bad("Bad Request: wrong remote file identifier specified")  # only uploads are emulated
        data = self.uploads[voice["sha256"]]
        if not (data.startswith(b"OggS") and b"OpusHead" in data[:200]):
            raise _bad("Bad Request: wrong type of the web page content")  # what Telegram says of non-Opus
        if len(data) > MAX_VOICE_BYTES:
            raise _bad("Bad Request: file is too big")
        chat_id = params["chat_id"]
        if isinstance(chat_id, str) and re.fullmatch(r"-?\d+", chat_id):
            chat_id = int(chat_id)  # a form field is text; Telegram reads a numeric chat id as the number
        message_id = self._last_message_id.get(chat_id, 0) + 1
        self._last_message_id[chat_id] = message_id
        self._voices.append({**_copy(params), "chat_id": chat_id, "message_id": message_id})
        return {**self._message_object(chat_id, message_id, "", None), "voice": {"file_id": voice["sha256"]}}

    def _send_business_message(self, params: dict[str, Any]) -> dict[str, Any]:
        """sendMessage through a business connection: the connection and the chat are checked first (as
        TDLib and Telegram do), then the message as any other."""
        connection_id = str(params["business_connection_id"])
        connection = self._replying_connection(connection_id)
        chat_id = params["chat_id"]
        if isinstance(chat_id, str) and re.fullmatch(r"-?\d+", chat_id):
            chat_id = int(chat_id)
        if not isinstance(chat_id, int) or chat_id <= 0:
            raise _bad(BUSINESS_NOT_PRIVATE)
        owner = connection["user_id"]
        if chat_id == owner:
            raise _bad(BUSINESS_TO_SELF)
        wrote_at = self._contact_wrote_at.get((owner, chat_id))
        if wrote_at is None or self.now() - wrote_at > BUSINESS_REPLY_WINDOW_SECONDS:
            raise _bad(BUSINESS_PAST_WINDOW)
        text = self._visible_text(params)
        _check_reply_markup(params.get("reply_markup"))
        check_link_preview_options(params.get("link_preview_options"), self._types["LinkPreviewOptions"])
        counter = ("business", owner, chat_id)  # the owner's chat with the contact, not the bot's
        message_id = self._last_message_id.get(counter, 0) + 1
        self._last_message_id[counter] = message_id
        self._business_messages.append({**_copy(params), "chat_id": chat_id, "message_id": message_id})
        return self._message_object(chat_id, message_id, text, params.get("reply_markup")) | {
            "from": {"id": owner, "is_bot": False, "first_name": "Owner"},
            "business_connection_id": connection_id,
            "sender_business_bot": self._bot_user(),
        }

    def _replying_connection(self, connection_id: str) -> dict[str, Any]:
        """The connection, if the bot may reply through it; else Telegram's refusal."""
        connection = self._business_connections.get(connection_id)
        if connection is None:
            raise _bad(BUSINESS_CONNECTION_NOT_FOUND)
        if not connection["is_enabled"]:
            raise _bad(BUSINESS_CONNECTION_DISABLED)
        if not connection["can_reply"]:
            raise BotApiError(HTTPStatus.FORBIDDEN, BUSINESS_CANNOT_REPLY)
        return connection

    def _do_edit_message_text(self, params: dict[str, Any]) -> dict[str, Any]:
        if params.get("business_connection_id") is not None:
            message = self._find_business_message(params)
        else:
            message = self._find_message(params)
        if params.get("text") in (None, ""):
            raise _bad("Bad Request: text must be non-empty")
        text = self._visible_text(params)
        _check_reply_markup(params.get("reply_markup"))
        check_link_preview_options(params.get("link_preview_options"), self._types["LinkPreviewOptions"])
        new = {key: params.get(key) for key in ("text", "parse_mode", "entities", "reply_markup")}
        if all(message.get(key) == value for key, value in new.items()):
            raise BotApiError(
                HTTPStatus.BAD_REQUEST,
                "Bad Request: message is not modified: specified new message content and reply markup "
                "are exactly the same as a current content and reply markup of the message",
            )
        self._apply_edit(message, new)
        return self._message_object(message["chat_id"], message["message_id"], text, new["reply_markup"])

    def _do_edit_message_reply_markup(self, params: dict[str, Any]) -> dict[str, Any]:
        message = self._find_message(params)
        _check_reply_markup(params.get("reply_markup"))
        if message.get("reply_markup") == params.get("reply_markup"):
            raise _bad("Bad Request: message is not modified")
        self._apply_edit(message, {"reply_markup": params.get("reply_markup")})
        text = self.text_of(message)
        return self._message_object(message["chat_id"], message["message_id"], text, message["reply_markup"])

    # -- helpers -----------------------------------------------------------------------------------

    def _check_thread(self, method: str, params: dict[str, Any]) -> None:
        """A message_thread_id must name a topic the chat has (never General, 1), as Telegram checks it."""
        thread = params.get("message_thread_id")
        if thread is None:
            return
        chat_id = params.get("chat_id")
        if isinstance(chat_id, str) and re.fullmatch(r"-?\d+", chat_id):
            chat_id = int(chat_id)
        if thread == GENERAL_TOPIC or (chat_id, thread) not in self._topics:
            raise _bad(THREAD_NOT_FOUND)

    def _visible_text(self, params: dict[str, Any], *, allow_empty: bool = False) -> str:
        text = str(params.get("text") or "")
        parse_mode = params.get("parse_mode")
        if parse_mode is not None and parse_mode not in PARSE_MODES:
            raise _bad(f"Bad Request: unsupported parse_mode {parse_mode!r}")
        if parse_mode == "HTML":
            try:
                text = parse_telegram_html(text)
            except HtmlParseError as error:
                raise _bad(f"Bad Request: can't parse entities: {error}") from None
        if not text.strip() and not allow_empty:
            raise _bad("Bad Request: text must be non-empty")
        if _utf16_length(text) > MAX_TEXT_LENGTH:
            raise _bad("Bad Request: message is too long")
        return text

    def _find_message(self, params: dict[str, Any]) -> dict[str, Any]:
        if params.get("inline_message_id") is not None:
            raise _bad("Bad Request: inline messages are not supported here")
        for message in self._messages:
            same_chat = message["chat_id"] == params.get("chat_id")
            if same_chat and message["message_id"] == params.get("message_id"):
                return message
        raise _bad("Bad Request: message to edit not found")

    def _find_business_message(self, params: dict[str, Any]) -> dict[str, Any]:
        connection_id = str(params["business_connection_id"])
        self._replying_connection(connection_id)
        for message in self._business_messages:
            same_chat = message["chat_id"] == params.get("chat_id")
            same_message = message["message_id"] == params.get("message_id")
            if same_chat and same_message and message["business_connection_id"] == connection_id:
                return message
        raise _bad("Bad Request: message to edit not found")

    def _apply_edit(self, message: dict[str, Any], new: dict[str, Any]) -> None:
        for key, value in new.items():
            if value is None:
                message.pop(key, None)
            else:
                message[key] = value
        message["edit_count"] = int(message.get("edit_count", 0)) + 1

    def _bot_user(self) -> dict[str, Any]:
        prefix = self.token.split(":", 1)[0]
        bot_id = int(prefix) if prefix.isdigit() else 1
        return {"id": bot_id, "is_bot": True, "first_name": "Stepwise (fake)", "username": "stepwise_bot"}

    def _message_object(self, chat_id: Any, message_id: int, text: str, reply_markup: Any) -> dict[str, Any]:
        message: dict[str, Any] = {
            "message_id": message_id,
            "from": self._bot_user(),
            "chat": {"id": chat_id, "type": "private"},
            "date": int(time.time()),
            "text": text,
        }
        if reply_markup:
            message["reply_markup"] = reply_markup
        return message


def _check_reply_markup(markup: Any) -> None:
    if markup is None:
        return
    if isinstance(markup, dict) and {"keyboard", "remove_keyboard", "force_reply"} & set(markup):
        return
    rows = markup.get("inline_keyboard") if isinstance(markup, dict) else None
    if not isinstance(rows, list) or not all(isinstance(row, list) for row in rows):
        raise _bad("Bad Request: can't parse reply keyboard markup JSON object")
    for row in rows:
        for button in row:
            if not isinstance(button, dict) or not str(button.get("text") or "").strip():
                raise _bad("Bad Request: inline keyboard button text is empty")
            data = button.get("callback_data")
            if data is not None and not 1 <= len(str(data).encode("utf-8")) <= MAX_CALLBACK_DATA_BYTES:
                raise _bad("Bad Request: BUTTON_DATA_INVALID")
            if "web_app" in button:
                _check_web_app(button["web_app"])
            if "url" in button and not str(button["url"]).startswith(("https://", "http://", "tg://")):
                raise _bad("Bad Request: BUTTON_URL_INVALID")


def _check_web_app(web_app: Any) -> None:
    """A WebAppInfo: an object with the page's URL (Telegram takes HTTPS only; the local emulation serves the
    page on http://127.0.0.1, which the fake lets through)."""
    url = web_app.get("url") if isinstance(web_app, dict) else None
    if not isinstance(url, str) or not url.startswith(("https://", "http://127.0.0.1")):
        raise _bad("Bad Request: BUTTON_URL_INVALID")


def _coerce(name: str, value: Any, types: list[str]) -> Any:
    """Decode form strings and JSON-serialized objects; reject values of the wrong kind."""
    if isinstance(value, str) and "String" not in types:
        if "Integer" in types and re.fullmatch(r"-?\d+", value):
            return int(value)
        if "Boolean" in types and value in ("true", "false"):
            return value == "true"
        try:
            value = json.loads(value)
        except ValueError:
            raise _wrong_type(name, types) from None
    if isinstance(value, bool):
        ok = "Boolean" in types
    elif isinstance(value, int):
        ok = bool({"Integer", "Float", "String"} & set(types))
        value = str(value) if types == ["String"] else value
    elif isinstance(value, str):
        ok = "String" in types
    elif isinstance(value, list):
        ok = any(kind.startswith("Array of") for kind in types)
    elif isinstance(value, dict):
        ok = any(kind not in _SCALAR_TYPES and not kind.startswith("Array of") for kind in types)
    else:
        ok = isinstance(value, float) and "Float" in types
    if not ok:
        raise _wrong_type(name, types)
    return value


def _bad(description: str) -> BotApiError:
    return BotApiError(HTTPStatus.BAD_REQUEST, description)


def _wrong_type(name: str, types: list[str]) -> BotApiError:
    return _bad(f'Bad Request: parameter "{name}" must be {" or ".join(types)}')


def _error(error: BotApiError) -> tuple[int, dict[str, Any]]:
    body: dict[str, Any] = {"ok": False, "error_code": int(error.status), "description": error.description}
    if error.retry_after is not None:
        body["parameters"] = {"retry_after": error.retry_after}
    return int(error.status), body


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def _copy(value: Any) -> Any:
    return json.loads(json.dumps(value))


class _Server(ApiServer):
    api: FakeBotApi


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"

    def do_POST(self) -> None:
        self._answer()

    def do_GET(self) -> None:
        self._answer()

    def log_message(self, format: str, *args: Any) -> None:
        logger.debug("fake bot api: " + format, *args)

    def _answer(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        status, body = self.server.api.answer(self.command, self.path, self.headers.get("Content-Type"), raw)
        if isinstance(body, bytes):
            self._send_file(body)
        else:
            self._send(status, body)

    def _send_file(self, data: bytes) -> None:
        self.send_response(HTTPStatus.OK)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _send(self, status: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode("utf-8")
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):  # the client gave up waiting (see slow_next)
            logger.debug("fake bot api: the client left before the answer")
            self.close_connection = True
