"""Amazon Transcribe as a `Transcriber`: batch jobs on audio put into S3.

Streaming transcription would answer sooner, but it must be fed at real-time pace and needs another SDK; a
voice note is short, so a batch job is started and polled. The job's name comes from the note, so a turn
retried after its function died mid-job finds the job started before and polls it instead of paying for a
second one. Once the job has ended, the audio, the transcript and the job are deleted: nothing the user said
is kept. When the wait is given up (the time-out, throttling), nothing will poll the job again (the note is
answered as not transcribed), so it is stopped as far as Transcribe allows: it has no stop operation and
refuses to delete a job still queued or running, so the audio is deleted first (a job still queued then fails
for want of it instead of being transcribed) and the job is deleted when it has already ended.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import time
from functools import partial
from typing import TYPE_CHECKING, Any

from botocore.exceptions import (
    BotoCoreError,
    ClientError,
    NoCredentialsError,
    NoRegionError,
    ParamValidationError,
)

from stepwise.voice.models import (
    Transcript,
    TranscriptionRejected,
    TranscriptionTransient,
    VoiceError,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Collection, Sequence

logger = logging.getLogger(__name__)

KEY_PREFIX = "voice/"
JOB_NAME_PREFIX = "stepwise-"
MAX_JOB_NAME = 200  # TranscriptionJobName: ^[0-9a-zA-Z._-]+, 1 to 200 characters
_MAX_SAFE_ID = 160
_UNSAFE = re.compile(r"[^0-9a-zA-Z._-]")
_MAX_POLL_SECONDS = 3.0
_MAX_REASON = 300

# MediaFormat values (StartTranscriptionJob), by MIME type and by file extension.
_FORMAT_BY_MIME = {
    "audio/ogg": "ogg",
    "audio/opus": "ogg",
    "application/ogg": "ogg",
    "audio/mpeg": "mp3",
    "audio/mp3": "mp3",
    "audio/mp4": "mp4",
    "video/mp4": "mp4",
    "audio/m4a": "m4a",
    "audio/x-m4a": "m4a",
    "audio/wav": "wav",
    "audio/x-wav": "wav",
    "audio/wave": "wav",
    "audio/vnd.wave": "wav",
    "audio/flac": "flac",
    "audio/x-flac": "flac",
    "audio/webm": "webm",
    "video/webm": "webm",
    "audio/amr": "amr",
    "audio/amr-wb": "amr",
}
_FORMAT_BY_EXTENSION = {
    "ogg": "ogg",
    "oga": "ogg",
    "opus": "ogg",
    "mp3": "mp3",
    "mp4": "mp4",
    "m4a": "m4a",
    "wav": "wav",
    "flac": "flac",
    "webm": "webm",
    "amr": "amr",
}

_TRANSIENT_CODES = frozenset(
    {
        "ThrottlingException",
        "Throttling",
        "TooManyRequestsException",
        "LimitExceededException",
        "InternalFailureException",
        "InternalError",
        "ServiceUnavailable",
        "ServiceUnavailableException",
        "SlowDown",
        "RequestTimeout",
        "RequestTimeoutException",
    }
)
# FailureReason words that mean this audio will never be transcribed (checked after "internal").
_REJECTED_REASONS = (
    "media format",
    "unsupported",
    "not supported",
    "invalid",
    "too short",
    "too small",
    "too long",
    "too large",
    "duration",
    "speech",
    "language",
    "sample rate",
    "corrupt",
    "empty",
    "access",
    "permission",
)


def media_format(mime_type: str | None, file_name: str | None) -> str | None:
    """Transcribe's MediaFormat for the audio: by MIME type, else by file extension; "ogg" when neither is
    known (Telegram records voice notes as Ogg Opus); None when they name a format Transcribe cannot read."""
    if mime_type:
        found = _FORMAT_BY_MIME.get(mime_type.split(";")[0].strip().lower())
        if found:
            return found
    if file_name and "." in file_name:
        found = _FORMAT_BY_EXTENSION.get(file_name.rsplit(".", 1)[1].lower())
        if found:
            return found
    return "ogg" if not mime_type and not file_name else None


def safe_id(job_id: str) -> str:
    """`job_id` as it can stand in a job name and an S3 key; ids that had to be changed or shortened get a
    hash of the original, so two ids never share a job."""
    if not job_id:
        raise ValueError("job_id must not be empty")
    cleaned = _UNSAFE.sub("-", job_id)
    if cleaned == job_id and len(cleaned) <= _MAX_SAFE_ID:
        return cleaned
    digest = hashlib.sha256(job_id.encode()).hexdigest()[:16]
    return f"{cleaned[:_MAX_SAFE_ID]}-{digest}"


def job_name(job_id: str) -> str:
    """The TranscriptionJobName for a note: the same for every retry of it."""
    return f"{JOB_NAME_PREFIX}{safe_id(job_id)}"[:MAX_JOB_NAME]


class AwsTranscriber:
    """`Transcriber` over Amazon Transcribe batch jobs, the audio passing through `bucket`.

    `language` ("en-US") fixes the language; without it Transcribe identifies it, among `language_options`
    when given. The job is polled every `poll_seconds`, the wait growing to 3 s, for at most
    `timeout_seconds`. The clients come from factories, so a test can hand in stubbed or fake ones.
    """

    name = "transcribe"

    def __init__(
        self,
        s3: Callable[[], Any],
        transcribe: Callable[[], Any],
        bucket: str,
        *,
        language: str | None = None,
        language_options: Sequence[str] = (),
        poll_seconds: float = 1.0,
        timeout_seconds: float = 120.0,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if not bucket:
            raise ValueError("bucket must not be empty")
        if poll_seconds <= 0 or timeout_seconds <= 0:
            raise ValueError("poll_seconds and timeout_seconds must be positive")
        self._s3 = s3
        self._transcribe = transcribe
        self._bucket = bucket
        self._language = language
        self._language_options = list(language_options)
        self._poll_seconds = poll_seconds
        self._max_poll_seconds = max(poll_seconds, _MAX_POLL_SECONDS)
        self._timeout_seconds = timeout_seconds
        self._sleep = sleep
        self._clock = clock

    def transcribe(
        self, audio: bytes, *, job_id: str, mime_type: str | None, file_name: str | None
    ) -> Transcript:
        """The words of `audio`. Whatever happens, the audio and the transcript are deleted afterwards, and
        the job too unless Transcribe still runs it (see the module docstring)."""
        if not audio:
            raise TranscriptionRejected("no audio")
        fmt = media_format(mime_type, file_name)
        if fmt is None:
            raise TranscriptionRejected(f"Transcribe does not read {mime_type or file_name}")
        name = job_name(job_id)
        audio_key = f"{KEY_PREFIX}{safe_id(job_id)}.{fmt}"
        transcript_key = f"{KEY_PREFIX}{safe_id(job_id)}.json"
        s3 = _aws_call("S3 client", self._s3)
        client = _aws_call("Transcribe client", self._transcribe)
        maybe_job = False  # a job may exist: started, or its start failed without a clear refusal
        try:
            _aws_call("PutObject", lambda: s3.put_object(Bucket=self._bucket, Key=audio_key, Body=audio))
            maybe_job = True
            try:
                self._start(client, name, fmt, audio_key, transcript_key)
            except TranscriptionRejected:
                maybe_job = False  # refused: no job was made
                raise
            job = self._wait(client, name)
            return self._result(s3, job, transcript_key)
        finally:
            self._clean_up(s3, client, name, [audio_key, transcript_key], job=maybe_job)

    def _start(self, client: Any, name: str, fmt: str, audio_key: str, transcript_key: str) -> None:
        params: dict[str, Any] = {
            "TranscriptionJobName": name,
            "Media": {"MediaFileUri": f"s3://{self._bucket}/{audio_key}"},
            "MediaFormat": fmt,
            "OutputBucketName": self._bucket,
            "OutputKey": transcript_key,
        }
        if self._language:
            params["LanguageCode"] = self._language
        else:
            params["IdentifyLanguage"] = True
            if self._language_options:
                params["LanguageOptions"] = self._language_options
        started = _aws_call(
            "StartTranscriptionJob",
            lambda: client.start_transcription_job(**params),
            tolerated={"ConflictException"},
        )
        if started is None:
            logger.info("transcription job %s exists already: polling it", name)

    def _wait(self, client: Any, name: str) -> dict[str, Any]:
        """The job once COMPLETED or FAILED; TranscriptionTransient when it takes longer than the time-out."""
        deadline = self._clock() + self._timeout_seconds
        interval = self._poll_seconds
        while True:
            answer = _aws_call(
                "GetTranscriptionJob", lambda: client.get_transcription_job(TranscriptionJobName=name)
            )
            job: dict[str, Any] = answer["TranscriptionJob"]
            status = job.get("TranscriptionJobStatus")
            if status in ("COMPLETED", "FAILED"):
                return job
            remaining = deadline - self._clock()
            if remaining <= 0:
                raise TranscriptionTransient(
                    f"transcription job {name} still {status} after {self._timeout_seconds:g} s"
                )
            self._sleep(min(interval, remaining))
            interval = min(interval * 1.5, self._max_poll_seconds)

    def _result(self, s3: Any, job: dict[str, Any], transcript_key: str) -> Transcript:
        if job.get("TranscriptionJobStatus") == "FAILED":
            raise _failure(str(job.get("FailureReason") or "no reason given"))
        data = _aws_call(
            "GetObject",
            lambda: _read_body(s3.get_object(Bucket=self._bucket, Key=transcript_key)),
            transient={"NoSuchKey"},  # the job is deleted below, so the retry transcribes afresh
        )
        try:
            text = json.loads(data)["results"]["transcripts"][0]["transcript"]
        except (ValueError, KeyError, IndexError, TypeError) as error:
            raise TranscriptionTransient(f"transcript output unreadable: {type(error).__name__}") from error
        if not isinstance(text, str):
            raise TranscriptionTransient("transcript output unreadable: not text")
        language = job.get("LanguageCode")
        return Transcript(
            text=text.strip(),
            seconds=0.0,  # the caller knows the note's length from Telegram
            transcriber=self.name,
            language=language if isinstance(language, str) else None,
        )

    def _clean_up(self, s3: Any, client: Any, name: str, keys: list[str], *, job: bool) -> None:
        """Delete both objects (the audio first: a job still queued then fails rather than transcribe it),
        then the job; a failure is logged, never raised (the bucket's lifecycle rule is the backstop)."""
        for key in keys:
            _quietly("DeleteObject", partial(s3.delete_object, Bucket=self._bucket, Key=key))
        if not job:
            return
        delete = partial(client.delete_transcription_job, TranscriptionJobName=name)
        if _quietly("DeleteTranscriptionJob", delete) == "BadRequestException":
            # Transcribe refuses to delete a job still queued or running, and has no way to stop one.
            logger.warning(
                "transcription job %s given up while Transcribe still runs it: its audio was deleted; it "
                "cannot be stopped and ends by itself (its transcript expires with the bucket's rule)",
                name,
            )


def _quietly(action: str, step: Callable[[], Any]) -> str | None:
    """Run a cleanup step; a failure is logged, never raised. The error code of a refusal, else None."""
    try:
        _aws_call(action, step, tolerated={"NotFoundException"})
    except VoiceError as error:
        cause = error.__cause__
        if isinstance(cause, ClientError):
            code = str(cause.response.get("Error", {}).get("Code", ""))
            if code == "BadRequestException":
                return code
        logger.warning("voice cleanup failed: %s", error)
    except Exception as error:  # a cleanup failure must not hide the transcript or the real error
        logger.warning("voice cleanup failed: %s: %s", action, type(error).__name__)
    return None


def _read_body(response: dict[str, Any]) -> bytes:
    body = response["Body"]
    try:
        data: bytes = body.read()
    finally:
        body.close()
    return data


def _failure(reason: str) -> VoiceError:
    """The error for a FAILED job: rejected when its FailureReason is about the audio or the request."""
    text = reason.lower()
    message = f"transcription job failed: {reason[:_MAX_REASON]}"
    if "internal" not in text and any(word in text for word in _REJECTED_REASONS):
        return TranscriptionRejected(message)
    return TranscriptionTransient(message)


def _aws_call(
    action: str,
    call: Callable[[], Any],
    *,
    tolerated: Collection[str] = (),
    transient: Collection[str] = (),
) -> Any:
    """`call()`, its botocore errors turned into voice errors (None for a `tolerated` error code). The
    message keeps the action, the error code and the HTTP status, never the request."""
    try:
        return call()
    except ClientError as error:
        code = str(error.response.get("Error", {}).get("Code", "Unknown"))
        if code in tolerated:
            return None
        status = int(error.response.get("ResponseMetadata", {}).get("HTTPStatusCode") or 0)
        message = f"{action}: {code} (HTTP {status})"
        if code in _TRANSIENT_CODES or code in transient or status == 429 or status >= 500:
            raise TranscriptionTransient(message) from error
        raise TranscriptionRejected(message) from error
    except (ParamValidationError, NoCredentialsError, NoRegionError) as error:
        raise TranscriptionRejected(f"{action}: {type(error).__name__}") from error
    except BotoCoreError as error:  # connection refused or lost, read time-outs
        raise TranscriptionTransient(f"{action}: {type(error).__name__}") from error
