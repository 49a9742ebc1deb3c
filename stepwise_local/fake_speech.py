"""``FakeSpeechToText``: an OpenAI-compatible speech-to-text server over real HTTP on 127.0.0.1.

It answers ``POST /v1/audio/transcriptions`` as OpenAI does: a multipart/form-data body with ``file`` and
``model`` (``language``, ``response_format`` optional), ``Authorization: Bearer <key>``, OpenAI-style error
bodies. The file must look like audio (its first bytes); the transcript is the one registered for the file's
bytes with ``add_transcript``, else a default. Failures are injected with ``fail_next``, late answers with
``slow_next``; every request that reaches the endpoint is in ``requests``. Standard library only (the
multipart body is parsed with ``email``).
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import threading
import time
from dataclasses import dataclass
from email import policy
from email.message import EmailMessage
from email.parser import BytesParser
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import urlsplit

from stepwise_local.loopback import ApiServer, LoopbackServer

logger = logging.getLogger(__name__)

DEFAULT_API_KEY = "sk-fake-speech-to-text-key"
DEFAULT_TEXT = "hello from a voice note"
ENDPOINT = "/v1/audio/transcriptions"
MAX_FILE_BYTES = 25 * 1024 * 1024  # OpenAI: uploads up to 25 MB
MAX_BODY_BYTES = MAX_FILE_BYTES + 1024 * 1024
RESPONSE_FORMATS = frozenset({"json", "text", "verbose_json"})
_LANGUAGE = re.compile(r"^[a-z]{2}$")
_ERROR_TYPES: dict[int, tuple[str, str | None]] = {
    HTTPStatus.BAD_REQUEST: ("invalid_request_error", None),
    HTTPStatus.UNAUTHORIZED: ("invalid_request_error", "invalid_api_key"),
    HTTPStatus.NOT_FOUND: ("invalid_request_error", "not_found"),
    HTTPStatus.REQUEST_ENTITY_TOO_LARGE: ("invalid_request_error", "file_too_large"),
    HTTPStatus.TOO_MANY_REQUESTS: ("requests", "rate_limit_exceeded"),
}


@dataclass(frozen=True)
class FormField:
    """One part of a multipart/form-data body: its value, and for files their name and content type."""

    name: str
    data: bytes
    file_name: str | None = None
    content_type: str | None = None

    @property
    def text(self) -> str:
        return self.data.decode("utf-8", errors="replace")


class SpeechApiError(Exception):
    """An error answer: HTTP status and an OpenAI-style error object."""

    def __init__(
        self, status: int, message: str, *, code: str | None = None, retry_after: int | None = None
    ) -> None:
        super().__init__(message)
        self.status = int(status)
        self.message = message
        error_type, default_code = _ERROR_TYPES.get(self.status, ("server_error", None))
        self.type = error_type
        self.code = code if code is not None else default_code
        self.retry_after = retry_after

    def body(self) -> dict[str, Any]:
        return {"error": {"message": self.message, "type": self.type, "param": None, "code": self.code}}


def parse_multipart(content_type: str, body: bytes) -> dict[str, FormField]:
    """The fields of a multipart/form-data body (the first of each name); ValueError when it is not one."""
    if content_type.split(";")[0].strip().lower() != "multipart/form-data":
        raise ValueError("Content-Type must be multipart/form-data")
    head = f"Content-Type: {content_type}\r\nMIME-Version: 1.0\r\n\r\n".encode("latin-1")
    message = BytesParser(policy=policy.HTTP).parsebytes(head + body)
    if not isinstance(message, EmailMessage) or not message.is_multipart() or message.defects:
        raise ValueError("the body is not valid multipart/form-data")
    fields: dict[str, FormField] = {}
    for part in message.iter_parts():
        if part.get_content_disposition() != "form-data":
            continue
        name = part.get_param("name", header="content-disposition")
        if not isinstance(name, str) or name in fields:
            continue
        payload = part.get_payload(decode=True)
        data = payload if isinstance(payload, bytes) else b""
        file_name = part.get_filename()
        content_type_of_part = part.get("Content-Type")
        fields[name] = FormField(
            name=name,
            data=data,
            file_name=file_name,
            content_type=str(content_type_of_part) if content_type_of_part is not None else None,
        )
    return fields


def looks_like_audio(data: bytes) -> bool:
    """True when the first bytes are those of Ogg, WAVE, FLAC, MP3 (ID3 or a frame sync), MP4/M4A or WebM."""
    return (
        data.startswith((b"OggS", b"fLaC", b"ID3", b"\x1a\x45\xdf\xa3"))
        or (data[:4] == b"RIFF" and data[8:12] == b"WAVE")
        or (len(data) >= 2 and data[0] == 0xFF and data[1] & 0xE0 == 0xE0)
        or data[4:8] == b"ftyp"
    )


class FakeSpeechToText(LoopbackServer):
    """An OpenAI-compatible speech-to-text server on ``http://127.0.0.1:<ephemeral port>/v1``.

    ``api_key`` is the key every request must carry as ``Authorization: Bearer <key>``; with None (or "")
    no key is asked for, as by a self-hosted server.
    """

    thread_name = "fake-speech-to-text"

    def __init__(self, api_key: str | None = DEFAULT_API_KEY, *, default_text: str = DEFAULT_TEXT) -> None:
        self.api_key = api_key or None
        self.default_text = default_text
        self._lock = threading.Lock()
        self._transcripts: dict[str, str] = {}  # sha256 of the file -> text
        self._requests: list[dict[str, Any]] = []
        self._faults: list[SpeechApiError] = []
        self._delays: list[float] = []

    def handler(self) -> type[BaseHTTPRequestHandler]:
        return _Handler

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT/v1`` (the server must be started)."""
        return self.root_url + "/v1"

    # -- set-up and inspection ---------------------------------------------------------------------

    def add_transcript(self, data: bytes, text: str) -> None:
        """Answer `text` for a file with exactly these bytes."""
        with self._lock:
            self._transcripts[hashlib.sha256(data).hexdigest()] = text

    @property
    def requests(self) -> list[dict[str, Any]]:
        """Every request that reached the endpoint, in order: ``model``, ``language``, ``file_name``,
        ``content_type``, ``size``, ``sha256``, ``authorization`` (as received), ``headers`` and the
        answered ``status`` (fields the request lacked are None)."""
        with self._lock:
            return [{**record, "headers": dict(record["headers"])} for record in self._requests]

    def fail_next(self, status: int, times: int = 1, retry_after: int | None = None) -> None:
        """Answer the next ``times`` requests with this HTTP status (and a ``Retry-After`` header when
        given), before looking at them."""
        error = SpeechApiError(status, f"Injected failure (HTTP {status})", retry_after=retry_after)
        with self._lock:
            self._faults.extend([error] * times)

    def slow_next(self, seconds: float, times: int = 1) -> None:
        """Answer the next ``times`` requests only after ``seconds``."""
        with self._lock:
            self._delays.extend([seconds] * times)

    def clear_faults(self) -> None:
        """Forget injected failures and delays not yet used."""
        with self._lock:
            self._faults.clear()
            self._delays.clear()

    def reset(self) -> None:
        """Forget faults, delays, registered transcripts and recorded requests."""
        with self._lock:
            self._faults.clear()
            self._delays.clear()
            self._transcripts.clear()
            self._requests.clear()

    # -- request handling (called from the server threads) -----------------------------------------

    def handle(self, headers: dict[str, str], body: bytes) -> tuple[int, dict[str, str], bytes]:
        """Answer one transcription request: ``(HTTP status, extra headers, body)``."""
        record: dict[str, Any] = {
            "model": None,
            "language": None,
            "file_name": None,
            "content_type": None,
            "size": None,
            "sha256": None,
            "authorization": _header(headers, "Authorization"),
            "headers": dict(headers),
        }
        fields: dict[str, FormField] | None
        try:
            fields = parse_multipart(_header(headers, "Content-Type") or "", body)
        except ValueError:
            fields = None
        if fields is not None:
            upload = fields.get("file")
            record["model"] = fields["model"].text if "model" in fields else None
            record["language"] = fields["language"].text if "language" in fields else None
            if upload is not None:
                record["file_name"] = upload.file_name
                record["content_type"] = upload.content_type
                record["size"] = len(upload.data)
                record["sha256"] = hashlib.sha256(upload.data).hexdigest()
        with self._lock:
            fault = self._faults.pop(0) if self._faults else None
            delay = self._delays.pop(0) if self._delays else 0.0
        try:
            if fault is not None:
                raise fault
            self._check_key(record["authorization"])
            status, extra, answer = self._answer(fields)
        except SpeechApiError as error:
            status, answer = error.status, json.dumps(error.body()).encode("utf-8")
            extra = {"Content-Type": "application/json"}
            if error.retry_after is not None:
                extra["Retry-After"] = str(error.retry_after)
        record["status"] = status
        with self._lock:
            self._requests.append(record)
        if delay:
            time.sleep(delay)
        return status, extra, answer

    def _check_key(self, authorization: str | None) -> None:
        if self.api_key is None:
            return
        scheme, _, given = (authorization or "").partition(" ")
        if scheme.lower() != "bearer" or given.strip() != self.api_key:
            shown = f"{given[:3]}***{given[-4:]}" if len(given) > 8 else "***"
            message = f"Incorrect API key provided: {shown}." if given else "You didn't provide an API key."
            raise SpeechApiError(HTTPStatus.UNAUTHORIZED, message)

    def _answer(self, fields: dict[str, FormField] | None) -> tuple[int, dict[str, str], bytes]:
        if fields is None:
            raise SpeechApiError(HTTPStatus.BAD_REQUEST, "Could not parse multipart form")
        upload = fields.get("file")
        if upload is None or upload.file_name is None:
            raise SpeechApiError(HTTPStatus.BAD_REQUEST, "you must provide a file", code="missing_file")
        model = fields.get("model")
        if model is None or not model.text.strip():
            raise SpeechApiError(HTTPStatus.BAD_REQUEST, "you must provide a model parameter")
        language = fields["language"].text if "language" in fields else None
        if language is not None and not _LANGUAGE.match(language):
            raise SpeechApiError(HTTPStatus.BAD_REQUEST, f"Invalid language '{language[:20]}'")
        response_format = fields["response_format"].text if "response_format" in fields else "json"
        if response_format not in RESPONSE_FORMATS:
            raise SpeechApiError(HTTPStatus.BAD_REQUEST, f"Invalid response_format '{response_format[:20]}'")
        if len(upload.data) > MAX_FILE_BYTES:
            raise SpeechApiError(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, "Maximum content size limit exceeded")
        if not looks_like_audio(upload.data):
            raise SpeechApiError(
                HTTPStatus.BAD_REQUEST,
                "Invalid file format. Supported formats: ['flac', 'm4a', 'mp3', 'mp4', 'mpeg', 'mpga', "
                "'oga', 'ogg', 'wav', 'webm']",
                code="invalid_file_format",
            )
        with self._lock:
            text = self._transcripts.get(hashlib.sha256(upload.data).hexdigest(), self.default_text)
        if response_format == "text":
            return HTTPStatus.OK, {"Content-Type": "text/plain; charset=utf-8"}, text.encode("utf-8")
        body: dict[str, Any] = {"text": text}
        if response_format == "verbose_json":
            body = {"task": "transcribe", "language": language or "en", "duration": 0.0, "text": text}
        return HTTPStatus.OK, {"Content-Type": "application/json"}, json.dumps(body).encode("utf-8")


def _header(headers: dict[str, str], name: str) -> str | None:
    wanted = name.lower()
    return next((value for key, value in headers.items() if key.lower() == wanted), None)


def _not_found() -> tuple[int, dict[str, str], bytes]:
    error = SpeechApiError(HTTPStatus.NOT_FOUND, "Invalid URL")
    return error.status, {"Content-Type": "application/json"}, json.dumps(error.body()).encode("utf-8")


class _Server(ApiServer):
    api: FakeSpeechToText


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        if length > MAX_BODY_BYTES:
            error = SpeechApiError(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, "Maximum content size limit exceeded")
            self.close_connection = True  # the body is not read
            self._send(error.status, {"Content-Type": "application/json"}, json.dumps(error.body()).encode())
            return
        body = self.rfile.read(length) if length else b""
        if urlsplit(self.path).path.rstrip("/") != ENDPOINT:
            self._send(*_not_found())
            return
        self._send(*self.server.api.handle(dict(self.headers.items()), body))

    def do_GET(self) -> None:
        self._send(*_not_found())

    def log_message(self, format: str, *args: Any) -> None:
        logger.debug("fake speech-to-text: " + format, *args)

    def _send(self, status: int, headers: dict[str, str], body: bytes) -> None:
        try:
            self.send_response(status)
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):  # the client gave up waiting (see slow_next)
            logger.debug("fake speech-to-text: the client left before the answer")
            self.close_connection = True
