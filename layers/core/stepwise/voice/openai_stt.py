"""The `Transcriber` over an OpenAI-compatible speech-to-text API (OpenAI, Groq, a self-hosted Whisper).

One multipart ``POST {base_url}/audio/transcriptions`` per note. Throttling (429), server failures (5xx),
time-outs and lost connections are tried again a bounded number of times, then `TranscriptionTransient`;
anything the server refuses for good is `TranscriptionRejected`. The API key is fetched per call and never
kept, logged or put into an error's text.
"""

from __future__ import annotations

import logging
import math
import time
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Any

from urllib3.exceptions import DecodeError, HTTPError, LocationValueError

from stepwise.aws.http_transport import HttpTransport, Response, form_body
from stepwise.voice.models import Transcript, TranscriptionRejected, TranscriptionTransient

if TYPE_CHECKING:
    from collections.abc import Callable

logger = logging.getLogger(__name__)

DEFAULT_FILE_NAME = "voice.ogg"
DEFAULT_MIME_TYPE = "audio/ogg"
MAX_RETRY_AFTER_SECONDS = 20.0
MAX_ERROR_CHARS = 200
_REDACTED = "<redacted>"
_REJECTED_FOR_GOOD = frozenset({400, 413, 415, 422})
_WRONG_SETTINGS = frozenset({401, 403, 404})
# The APIs tell the format by the file name's extension; Telegram names voice notes *.oga.
_EXTENSION_ALIASES = {".oga": ".ogg", ".opus": ".ogg"}
_EXTENSIONS_BY_MIME = {
    "audio/ogg": ".ogg",
    "audio/opus": ".ogg",
    "audio/mpeg": ".mp3",
    "audio/mp3": ".mp3",
    "audio/wav": ".wav",
    "audio/x-wav": ".wav",
    "audio/wave": ".wav",
    "audio/flac": ".flac",
    "audio/x-flac": ".flac",
    "audio/mp4": ".m4a",
    "audio/m4a": ".m4a",
    "audio/x-m4a": ".m4a",
    "audio/webm": ".webm",
    "video/mp4": ".mp4",
    "video/webm": ".webm",
}


class _Retry(Exception):
    """One attempt failed in a way that trying again may fix; `delay` is the wait the server asked for."""

    def __init__(self, reason: str, delay: float | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.delay = delay


class OpenAICompatibleTranscriber:
    """`Transcriber` for ``POST {base_url}/audio/transcriptions`` (``base_url`` such as
    ``https://api.openai.com/v1``). ``api_key`` is called for each note; "" sends no Authorization header
    (servers without keys). ``language`` (ISO-639-1) is sent when set. ``max_retries`` bounds the extra
    attempts after a 429, a 5xx, a time-out or a lost connection. ``transport`` carries the HTTP (its own
    by default)."""

    name = "openai"

    def __init__(
        self,
        base_url: str,
        api_key: Callable[[], str],
        model: str,
        *,
        language: str | None = None,
        timeout_seconds: float = 30.0,
        connect_timeout_seconds: float = 5.0,
        max_retries: int = 2,
        transport: HttpTransport | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if not base_url.strip():
            raise ValueError("base_url must not be empty")
        if not model.strip():
            raise ValueError("model must not be empty")
        if max_retries < 0:
            raise ValueError("max_retries must not be negative")
        self._base_url = base_url.strip().rstrip("/")
        self._api_key = api_key
        self._model = model.strip()
        self._language = language.strip() if language and language.strip() else None
        self._connect_timeout = connect_timeout_seconds
        self._read_timeout = timeout_seconds
        self._max_retries = max_retries
        self._http = transport if transport is not None else HttpTransport()
        self._sleep = sleep

    def __repr__(self) -> str:
        return (
            f"OpenAICompatibleTranscriber(base_url={self._base_url!r}, model={self._model!r}, "
            f"language={self._language!r})"
        )

    def transcribe(
        self, audio: bytes, *, job_id: str, mime_type: str | None, file_name: str | None
    ) -> Transcript:
        """The words of `audio`; TranscriptionTransient after the retries, TranscriptionRejected for good."""
        key = (self._api_key() or "").strip()
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        fields = {"model": self._model, "response_format": "json"}
        if self._language:
            fields["language"] = self._language
        upload = (_upload_name(file_name, mime_type), audio, mime_type or DEFAULT_MIME_TYPE)
        url = f"{self._base_url}/audio/transcriptions"
        attempt = 0
        while True:
            try:
                return self._attempt(url, headers, fields, upload, key)
            except _Retry as retry:
                reason, delay = retry.reason, retry.delay
            if attempt >= self._max_retries:
                raise TranscriptionTransient(f"transcription failed after {attempt + 1} attempt(s): {reason}")
            wait = delay if delay is not None else float(2**attempt)
            attempt += 1
            logger.warning(
                "transcription of %s: %s; trying again in %ss (%s of %s)",
                job_id,
                reason,
                wait,
                attempt,
                self._max_retries,
            )
            self._sleep(wait)

    def _attempt(
        self,
        url: str,
        headers: dict[str, str],
        fields: dict[str, str],
        upload: tuple[str, bytes, str],
        key: str,
    ) -> Transcript:
        response = self._post(url, headers, fields, upload, key)
        try:
            status = response.status
            if 200 <= status < 300:
                return self._transcript(response, status)
            message = _redact(_error_message(response), key)
            detail = f"HTTP {status}" + (f": {message}" if message else "")
            if status in (408, 429) or status >= 500:
                raise _Retry(detail, _retry_after(response))
            if status in _WRONG_SETTINGS:
                raise TranscriptionRejected(
                    f"the speech-to-text server refused the request ({detail}); "
                    "check the API key, the base URL and the model"
                )
            if status in _REJECTED_FOR_GOOD:
                raise TranscriptionRejected(f"the speech-to-text server refused the audio ({detail})")
            raise TranscriptionRejected(f"unexpected answer from the speech-to-text server ({detail})")
        finally:
            response.close()

    def _post(
        self,
        url: str,
        headers: dict[str, str],
        fields: dict[str, str],
        upload: tuple[str, bytes, str],
        key: str,
    ) -> Response:
        body, form_headers = form_body(fields, {"file": upload})
        try:
            return self._http.request(
                "POST",
                url,
                connect_timeout=self._connect_timeout,
                read_timeout=self._read_timeout,
                headers={**headers, **form_headers},
                body=body,
            )
        # An invalid URL, an answer that cannot be decoded, a header value http.client refuses (ValueError):
        # trying again cannot help.
        except (LocationValueError, DecodeError, ValueError) as exc:
            failure: Exception = TranscriptionRejected(
                f"the request could not be made ({_redact(_describe(exc), key)}); check the base URL and key"
            )
        except HTTPError as exc:  # time-outs, refused or dropped connections
            failure = _Retry(_redact(_describe(exc), key))
        # Raised outside the except blocks so the original exception (whose text may hold a header value)
        # is not chained into tracebacks.
        raise failure

    def _transcript(self, response: Response, status: int) -> Transcript:
        try:
            body: Any = response.json()
        except ValueError:
            body = None
        if not isinstance(body, dict) or not isinstance(body.get("text"), str):
            raise TranscriptionRejected(f"the answer (HTTP {status}) is not JSON with a string 'text'")
        text: str = body["text"]
        language = body.get("language")
        duration = body.get("duration")
        seconds = (
            float(duration)
            if isinstance(duration, (int, float))
            and not isinstance(duration, bool)
            and math.isfinite(duration)
            and duration >= 0
            else 0.0
        )
        return Transcript(
            text=text.strip(),
            seconds=seconds,
            transcriber=self.name,
            language=language.strip() if isinstance(language, str) and language.strip() else self._language,
        )


def _upload_name(file_name: str | None, mime_type: str | None) -> str:
    """The name the file is uploaded under: its last path part, with an extension the APIs know."""
    name = PurePosixPath((file_name or "").replace("\\", "/")).name.strip()
    if not name:
        return DEFAULT_FILE_NAME
    path = PurePosixPath(name)
    suffix = path.suffix.lower()
    if suffix in _EXTENSION_ALIASES:
        return str(path.with_suffix(_EXTENSION_ALIASES[suffix]))
    if not suffix:
        base_mime = (mime_type or DEFAULT_MIME_TYPE).split(";")[0].strip().lower()
        return name + _EXTENSIONS_BY_MIME.get(base_mime, ".ogg")
    return name


def _retry_after(response: Response) -> float | None:
    """The server's Retry-After in seconds when it is a number from 0 to 20, else None (back off)."""
    raw = response.headers.get("Retry-After")
    try:
        value = float(raw) if raw is not None else math.nan
    except ValueError:
        return None
    if math.isfinite(value) and 0 <= value <= MAX_RETRY_AFTER_SECONDS:
        return value
    return None


def _error_message(response: Response) -> str:
    """The server's own error message: OpenAI's error.message, a FastAPI detail, or the body's text."""
    try:
        body: Any = response.json()
    except ValueError:
        body = None
    message: Any = None
    if isinstance(body, dict):
        error = body.get("error")
        message = error.get("message") if isinstance(error, dict) else error
        if message is None:
            message = body.get("detail") or body.get("message")
    if message is None:
        message = response.body().decode("utf-8", errors="replace")
    return " ".join(str(message).split())


def _redact(text: str, key: str) -> str:
    """`text` without the key in it, at most MAX_ERROR_CHARS characters (cut after redacting)."""
    if key:
        text = text.replace(key, _REDACTED)
    if len(text) > MAX_ERROR_CHARS:
        text = text[: MAX_ERROR_CHARS - 3] + "..."
    return text


def _describe(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"
