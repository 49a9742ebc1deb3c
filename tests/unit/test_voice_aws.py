"""The AWS voice adapters (Transcribe batch jobs, Polly) on stubbed and fake clients, and the words a reply
speaks."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError, EndpointConnectionError, ReadTimeoutError
from botocore.response import StreamingBody
from botocore.stub import Stubber

from stepwise.voice.aws_transcribe import AwsTranscriber, job_name, media_format
from stepwise.voice.models import (
    Speaker,
    SpeechError,
    Transcriber,
    TranscriptionRejected,
    TranscriptionTransient,
)
from stepwise.voice.polly import PollySpeaker
from stepwise.voice.speakable import CODE_NOTE, speakable_text

BUCKET = "stepwise-voice"
AUDIO = b"OggS\x00\x02" + bytes(range(200))
OGG = {"mime_type": "audio/ogg", "file_name": None}


def client_error(code: str, status: int = 400, operation: str = "Call") -> ClientError:
    return ClientError(
        {
            "Error": {"Code": code, "Message": f"{code} happened"},
            "ResponseMetadata": {"HTTPStatusCode": status},
        },
        operation,
    )


def transcript_json(text: str) -> bytes:
    return json.dumps(
        {
            "jobName": "j",
            "accountId": "1",
            "status": "COMPLETED",
            "results": {"transcripts": [{"transcript": text}]},
        }
    ).encode()


class Body(io.BytesIO):
    """A response body that remembers being closed."""


class FakeS3:
    """The S3 calls the transcriber makes, on a dict; `errors[method]` is raised by that method."""

    def __init__(self) -> None:
        self.objects: dict[str, bytes] = {}
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.errors: dict[str, Exception] = {}

    def _call(self, method: str, params: dict[str, Any]) -> None:
        self.calls.append((method, params))
        if method in self.errors:
            raise self.errors[method]
        assert params["Bucket"] == BUCKET

    def put_object(self, **params: Any) -> dict[str, Any]:
        self._call("put_object", params)
        self.objects[params["Key"]] = params["Body"]
        return {}

    def get_object(self, **params: Any) -> dict[str, Any]:
        self._call("get_object", params)
        if params["Key"] not in self.objects:
            raise client_error("NoSuchKey", 404, "GetObject")
        return {"Body": Body(self.objects[params["Key"]])}

    def delete_object(self, **params: Any) -> dict[str, Any]:
        self._call("delete_object", params)
        self.objects.pop(params["Key"], None)
        return {}


class FakeTranscribe:
    """Transcribe's job calls: a started job goes through `statuses` (one per poll, the last one repeating)
    and, once COMPLETED, writes `text` to its output object in `s3`, as AWS does."""

    def __init__(self, s3: FakeS3, statuses: list[str] | None = None, text: str = "hello there") -> None:
        self.s3 = s3
        self.statuses = statuses if statuses is not None else ["IN_PROGRESS", "COMPLETED"]
        self.text = text
        self.failure_reason = "Internal failure"
        self.jobs: dict[str, dict[str, Any]] = {}
        self.started = 0  # jobs created (and paid for)
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.errors: dict[str, list[Exception]] = {}

    def _call(self, method: str, params: dict[str, Any]) -> None:
        self.calls.append((method, params))
        if self.errors.get(method):
            raise self.errors[method].pop(0)

    def start_transcription_job(self, **params: Any) -> dict[str, Any]:
        self._call("start_transcription_job", params)
        name = params["TranscriptionJobName"]
        if name in self.jobs:
            raise client_error("ConflictException", 400, "StartTranscriptionJob")
        self.started += 1
        self.jobs[name] = {"params": params, "polls": 0}
        return {"TranscriptionJob": {"TranscriptionJobName": name, "TranscriptionJobStatus": "QUEUED"}}

    def status(self, name: str) -> str:
        """What the job's last poll said (QUEUED before any)."""
        polls = self.jobs[name]["polls"]
        return self.statuses[min(polls - 1, len(self.statuses) - 1)] if polls else "QUEUED"

    def get_transcription_job(self, **params: Any) -> dict[str, Any]:
        self._call("get_transcription_job", params)
        job = self.jobs[params["TranscriptionJobName"]]
        status = self.statuses[min(job["polls"], len(self.statuses) - 1)]
        job["polls"] += 1
        answer: dict[str, Any] = {"TranscriptionJobName": params["TranscriptionJobName"]}
        answer["TranscriptionJobStatus"] = status
        answer["LanguageCode"] = job["params"].get("LanguageCode", "en-GB")
        if status == "COMPLETED":
            self.s3.objects[job["params"]["OutputKey"]] = transcript_json(self.text)
        if status == "FAILED":
            answer["FailureReason"] = self.failure_reason
        return {"TranscriptionJob": answer}

    def delete_transcription_job(self, **params: Any) -> dict[str, Any]:
        self._call("delete_transcription_job", params)
        name = params["TranscriptionJobName"]
        if name in self.jobs and self.status(name) not in ("COMPLETED", "FAILED"):
            # As AWS does: a job still queued or running cannot be deleted (and Transcribe cannot stop it).
            raise client_error("BadRequestException", 400, "DeleteTranscriptionJob")
        self.jobs.pop(name, None)
        return {}

    def methods(self) -> list[str]:
        return [method for method, _ in self.calls]


class FakeClock:
    """time.monotonic that moves only when the transcriber sleeps."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


@pytest.fixture
def s3() -> FakeS3:
    return FakeS3()


@pytest.fixture
def transcribe(s3: FakeS3) -> FakeTranscribe:
    return FakeTranscribe(s3)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


def transcriber(s3: Any, transcribe: Any, clock: FakeClock, **options: Any) -> AwsTranscriber:
    return AwsTranscriber(lambda: s3, lambda: transcribe, BUCKET, sleep=clock.sleep, clock=clock, **options)


# --- AwsTranscriber: the calls, on botocore's Stubber (the real request and response shapes) ----------------


@pytest.fixture
def aws_clients(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Any, Stubber, Any, Stubber]]:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    s3_client = boto3.client("s3", region_name="us-east-1")
    transcribe_client = boto3.client("transcribe", region_name="us-east-1")
    with Stubber(s3_client) as s3_stub, Stubber(transcribe_client) as transcribe_stub:
        yield s3_client, s3_stub, transcribe_client, transcribe_stub
        s3_stub.assert_no_pending_responses()
        transcribe_stub.assert_no_pending_responses()


def test_a_note_goes_to_s3_then_to_a_job_whose_transcript_is_read_and_everything_deleted(
    aws_clients: tuple[Any, Stubber, Any, Stubber], clock: FakeClock
) -> None:
    s3_client, s3_stub, transcribe_client, transcribe_stub = aws_clients
    # Given S3 and Transcribe answering with their real shapes: the job in progress once, then completed
    name = {"TranscriptionJobName": "stepwise-4711"}
    s3_stub.add_response("put_object", {}, {"Bucket": BUCKET, "Key": "voice/4711.ogg", "Body": AUDIO})
    transcribe_stub.add_response(
        "start_transcription_job",
        {"TranscriptionJob": {**name, "TranscriptionJobStatus": "QUEUED"}},
        {
            **name,
            "Media": {"MediaFileUri": f"s3://{BUCKET}/voice/4711.ogg"},
            "MediaFormat": "ogg",
            "IdentifyLanguage": True,
            "OutputBucketName": BUCKET,
            "OutputKey": "voice/4711.json",
        },
    )
    transcribe_stub.add_response(
        "get_transcription_job", {"TranscriptionJob": {**name, "TranscriptionJobStatus": "IN_PROGRESS"}}, name
    )
    transcribe_stub.add_response(
        "get_transcription_job",
        {"TranscriptionJob": {**name, "TranscriptionJobStatus": "COMPLETED", "LanguageCode": "de-DE"}},
        name,
    )
    body = transcript_json("  Guten Morgen  ")
    s3_stub.add_response(
        "get_object",
        {"Body": StreamingBody(io.BytesIO(body), len(body))},
        {"Bucket": BUCKET, "Key": "voice/4711.json"},
    )
    transcribe_stub.add_response("delete_transcription_job", {}, name)
    s3_stub.add_response("delete_object", {}, {"Bucket": BUCKET, "Key": "voice/4711.ogg"})
    s3_stub.add_response("delete_object", {}, {"Bucket": BUCKET, "Key": "voice/4711.json"})
    voice: Transcriber = transcriber(s3_client, transcribe_client, clock)
    # When a voice note is transcribed
    result = voice.transcribe(AUDIO, job_id="4711", mime_type="audio/ogg", file_name=None)
    # Then the words come back with the identified language; it waited once, the first poll interval
    assert (result.text, result.language, result.transcriber, result.seconds) == (
        "Guten Morgen",
        "de-DE",
        "transcribe",
        0.0,
    )
    assert clock.sleeps == [1.0]


def test_a_given_language_is_sent_instead_of_identifying_one(
    s3: FakeS3, transcribe: FakeTranscribe, clock: FakeClock
) -> None:
    # Given a transcriber told the language
    voice = transcriber(s3, transcribe, clock, language="en-US", language_options=["en-US", "de-DE"])
    # When it transcribes
    assert voice.transcribe(AUDIO, job_id="1", **OGG).language == "en-US"
    # Then the job names the language and does not identify one
    params = transcribe.calls[0][1]
    assert params["LanguageCode"] == "en-US"
    assert "IdentifyLanguage" not in params and "LanguageOptions" not in params


def test_language_options_go_with_language_identification(
    s3: FakeS3, transcribe: FakeTranscribe, clock: FakeClock
) -> None:
    voice = transcriber(s3, transcribe, clock, language_options=("en-US", "es-US"))
    voice.transcribe(AUDIO, job_id="1", **OGG)
    params = transcribe.calls[0][1]
    assert params["IdentifyLanguage"] is True
    assert params["LanguageOptions"] == ["en-US", "es-US"]
    assert "LanguageCode" not in params


@pytest.mark.parametrize(
    ("mime_type", "file_name", "expected"),
    [
        (None, None, "ogg"),
        ("audio/ogg", "voice.oga", "ogg"),
        ("audio/ogg; codecs=opus", None, "ogg"),
        ("audio/mpeg", "song.mp3", "mp3"),
        ("audio/x-m4a", None, "m4a"),
        ("audio/mp4", None, "mp4"),
        ("application/octet-stream", "memo.WAV", "wav"),
        (None, "memo.flac", "flac"),
        ("audio/webm", None, "webm"),
        ("audio/amr", None, "amr"),
        ("audio/aac", "memo.aac", None),
        ("image/png", None, None),
    ],
)
def test_the_media_format_comes_from_the_mime_type_or_the_file_name(
    mime_type: str | None, file_name: str | None, expected: str | None
) -> None:
    assert media_format(mime_type, file_name) == expected


def test_the_format_names_the_object_and_the_media_format(
    s3: FakeS3, transcribe: FakeTranscribe, clock: FakeClock
) -> None:
    transcriber(s3, transcribe, clock).transcribe(
        AUDIO, job_id="9", mime_type="audio/mpeg", file_name="a.mp3"
    )
    params = transcribe.calls[0][1]
    assert params["MediaFormat"] == "mp3"
    assert params["Media"] == {"MediaFileUri": f"s3://{BUCKET}/voice/9.mp3"}
    assert s3.calls[0] == ("put_object", {"Bucket": BUCKET, "Key": "voice/9.mp3", "Body": AUDIO})


def test_a_format_transcribe_cannot_read_is_rejected_before_any_call(
    s3: FakeS3, transcribe: FakeTranscribe, clock: FakeClock
) -> None:
    with pytest.raises(TranscriptionRejected):
        transcriber(s3, transcribe, clock).transcribe(
            AUDIO, job_id="1", mime_type="image/png", file_name=None
        )
    with pytest.raises(TranscriptionRejected):
        transcriber(s3, transcribe, clock).transcribe(b"", job_id="1", **OGG)
    assert s3.calls == [] and transcribe.calls == []


def test_job_names_are_stable_and_keep_to_transcribes_characters() -> None:
    assert job_name("123") == job_name("123") == "stepwise-123"
    odd = job_name("chat 5:msg/7")
    assert odd.startswith("stepwise-chat-5-msg-7-")
    assert odd != job_name("chat-5-msg-7"), "a changed id keeps a hash of the original"
    long = job_name("x" * 500)
    assert len(long) <= 200 and long == job_name("x" * 500) and long != job_name("x" * 499)
    for name in (odd, long):
        assert all(c.isalnum() or c in "._-" for c in name)


# --- a retry of the same note ---------------------------------------------------------------------------


def test_a_retry_after_the_function_died_mid_job_polls_that_job_and_pays_for_no_second_one(
    s3: FakeS3, clock: FakeClock
) -> None:
    # Given the audio and the running job a first attempt left when its function died (no cleanup ran)
    transcribe = FakeTranscribe(s3, statuses=["IN_PROGRESS"] * 3 + ["COMPLETED"])
    s3.objects["voice/77.ogg"] = AUDIO
    transcribe.start_transcription_job(TranscriptionJobName="stepwise-77", OutputKey="voice/77.json")
    # When the same note is tried again
    result = transcriber(s3, transcribe, clock, timeout_seconds=60).transcribe(AUDIO, job_id="77", **OGG)
    # Then it polled the existing job to the end: one job started in all, then everything deleted
    assert result.text == "hello there"
    assert transcribe.started == 1
    assert transcribe.jobs == {} and s3.objects == {}


def test_a_job_given_up_while_it_runs_loses_its_audio_first_and_is_deleted_when_it_can_be(
    s3: FakeS3, clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    # Given a job still running when the wait is given up: nothing will poll it again
    transcribe = FakeTranscribe(s3, statuses=["IN_PROGRESS"] * 8 + ["COMPLETED"])
    with pytest.raises(TranscriptionTransient, match="still IN_PROGRESS"):
        transcriber(s3, transcribe, clock, timeout_seconds=5).transcribe(AUDIO, job_id="77", **OGG)
    # Then its audio was deleted before the job was asked to go (a queued job then fails, untranscribed)
    assert s3.objects == {}
    deletes = [m for m, _ in s3.calls + transcribe.calls if m.startswith("delete")]
    assert deletes == ["delete_object", "delete_object", "delete_transcription_job"]
    # And Transcribe refused to delete a running job (it has no stop): that is said once in the log
    assert "stepwise-77" in transcribe.jobs
    assert [r.getMessage() for r in caplog.records if "cannot be stopped" in r.getMessage()]
    # When the job has ended by the time of the give-up, it is deleted too
    ended = FakeTranscribe(s3, statuses=["IN_PROGRESS"])
    ended.errors["get_transcription_job"] = [client_error("ThrottlingException")]
    ended.start_transcription_job(TranscriptionJobName="stepwise-78", OutputKey="voice/78.json")
    ended.jobs["stepwise-78"]["polls"] = 1
    ended.statuses = ["COMPLETED"]
    with pytest.raises(TranscriptionTransient):
        transcriber(s3, ended, clock).transcribe(AUDIO, job_id="78", **OGG)
    assert ended.jobs == {} and s3.objects == {}


def test_a_job_found_completed_on_retry_is_read_at_once(s3: FakeS3, clock: FakeClock) -> None:
    # Given the job of this note exists already and has completed
    transcribe = FakeTranscribe(s3, statuses=["COMPLETED"])
    transcribe.start_transcription_job(TranscriptionJobName="stepwise-5", OutputKey="voice/5.json")
    transcribe.calls.clear()
    # When the note is transcribed
    result = transcriber(s3, transcribe, clock).transcribe(AUDIO, job_id="5", **OGG)
    # Then the start met a conflict, the job was read without waiting, and nothing new was paid for
    assert result.text == "hello there"
    assert transcribe.methods() == [
        "start_transcription_job",
        "get_transcription_job",
        "delete_transcription_job",
    ]
    assert transcribe.started == 1 and clock.sleeps == []


# --- waiting and failing ----------------------------------------------------------------------------------


def test_polls_every_second_then_longer_up_to_three_seconds_until_the_time_out(
    s3: FakeS3, clock: FakeClock
) -> None:
    # Given a job that never finishes
    transcribe = FakeTranscribe(s3, statuses=["QUEUED", "IN_PROGRESS"])
    # When the transcriber waits for it with a 12 s time-out
    with pytest.raises(TranscriptionTransient, match="still IN_PROGRESS after 12 s"):
        transcriber(s3, transcribe, clock, timeout_seconds=12).transcribe(AUDIO, job_id="1", **OGG)
    # Then the waits grew from 1 s to 3 s, and the last one stopped at the time-out
    assert clock.sleeps == [1.0, 1.5, 2.25, 3.0, 3.0, 1.25]
    assert sum(clock.sleeps) == 12
    # And the running job, which cannot be deleted, has lost its audio
    assert transcribe.jobs and s3.objects == {}


@pytest.mark.parametrize(
    "reason",
    [
        "The media format provided does not match the detected media format. Check the media format and try "
        "your request again.",
        "Unsupported audio format",
        "Invalid file size: file size too large. Maximum audio duration is 4.000000 hours.",
        "Your audio file must have a speech segment long enough in duration to perform automatic language "
        "identification.",
        "The input media file length is too small. Minimum audio duration is 0.500000 milliseconds.",
    ],
)
def test_a_job_failed_on_its_audio_is_rejected_and_cleaned_up(
    s3: FakeS3, clock: FakeClock, reason: str
) -> None:
    transcribe = FakeTranscribe(s3, statuses=["FAILED"])
    transcribe.failure_reason = reason
    with pytest.raises(TranscriptionRejected, match="transcription job failed"):
        transcriber(s3, transcribe, clock).transcribe(AUDIO, job_id="1", **OGG)
    assert transcribe.jobs == {} and s3.objects == {}


@pytest.mark.parametrize("reason", ["Internal failure. Please try your request again.", "Something odd"])
def test_a_job_failed_on_transcribes_side_is_transient_and_cleaned_up_so_a_retry_starts_afresh(
    s3: FakeS3, clock: FakeClock, reason: str
) -> None:
    transcribe = FakeTranscribe(s3, statuses=["FAILED"])
    transcribe.failure_reason = reason
    with pytest.raises(TranscriptionTransient):
        transcriber(s3, transcribe, clock).transcribe(AUDIO, job_id="1", **OGG)
    assert transcribe.jobs == {} and s3.objects == {}


def test_a_completed_job_without_its_transcript_is_transient_and_deleted(
    s3: FakeS3, transcribe: FakeTranscribe, clock: FakeClock
) -> None:
    # Given the transcript object cannot be read
    s3.errors["get_object"] = client_error("NoSuchKey", 404, "GetObject")
    # When the job completes
    with pytest.raises(TranscriptionTransient, match="NoSuchKey"):
        transcriber(s3, transcribe, clock).transcribe(AUDIO, job_id="1", **OGG)
    # Then the job is gone, so the retry starts a new one rather than find this one again
    assert transcribe.jobs == {}


def test_an_unreadable_transcript_is_transient(
    s3: FakeS3, transcribe: FakeTranscribe, clock: FakeClock
) -> None:
    original = transcribe.get_transcription_job

    def garbled(**params: Any) -> dict[str, Any]:
        answer = original(**params)
        s3.objects = {key: b"not json" if key.endswith(".json") else v for key, v in s3.objects.items()}
        return answer

    transcribe.get_transcription_job = garbled  # type: ignore[method-assign]
    with pytest.raises(TranscriptionTransient, match="unreadable"):
        transcriber(s3, transcribe, clock).transcribe(AUDIO, job_id="1", **OGG)


def test_an_empty_transcript_is_an_empty_text(s3: FakeS3, clock: FakeClock) -> None:
    transcribe = FakeTranscribe(s3, statuses=["COMPLETED"], text="")
    assert transcriber(s3, transcribe, clock).transcribe(AUDIO, job_id="1", **OGG).text == ""


# --- errors of the calls ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "error",
    [
        client_error("ThrottlingException", 400),
        client_error("LimitExceededException", 400),
        client_error("InternalFailureException", 500),
        client_error("ServiceUnavailable", 503),
        EndpointConnectionError(endpoint_url="https://transcribe.us-east-1.amazonaws.com"),
        ReadTimeoutError(endpoint_url="https://transcribe.us-east-1.amazonaws.com"),
    ],
    ids=["throttling", "limit", "internal", "unavailable", "connection", "read-timeout"],
)
@pytest.mark.parametrize("method", ["start_transcription_job", "get_transcription_job"])
def test_throttling_server_and_connection_errors_are_transient_and_delete_the_audio(
    s3: FakeS3, transcribe: FakeTranscribe, clock: FakeClock, method: str, error: Exception
) -> None:
    transcribe.errors[method] = [error]
    with pytest.raises(TranscriptionTransient):
        transcriber(s3, transcribe, clock).transcribe(AUDIO, job_id="1", **OGG)
    # The job may exist (its start may have reached Transcribe): it is asked to go, its audio is gone
    assert transcribe.methods()[-1] == "delete_transcription_job"
    assert s3.objects == {}


def test_a_transient_error_then_a_retry_transcribes_with_one_job(
    s3: FakeS3, transcribe: FakeTranscribe, clock: FakeClock
) -> None:
    transcribe.errors["get_transcription_job"] = [client_error("ThrottlingException")]
    voice = transcriber(s3, transcribe, clock)
    with pytest.raises(TranscriptionTransient):
        voice.transcribe(AUDIO, job_id="1", **OGG)
    assert voice.transcribe(AUDIO, job_id="1", **OGG).text == "hello there"
    assert transcribe.started == 1


def test_access_denied_on_the_upload_is_rejected(
    s3: FakeS3, transcribe: FakeTranscribe, clock: FakeClock
) -> None:
    s3.errors["put_object"] = client_error("AccessDenied", 403, "PutObject")
    with pytest.raises(TranscriptionRejected, match=r"PutObject: AccessDenied \(HTTP 403\)"):
        transcriber(s3, transcribe, clock).transcribe(AUDIO, job_id="1", **OGG)
    assert transcribe.calls == []


def test_a_bad_request_on_start_is_rejected_and_the_audio_deleted(
    s3: FakeS3, transcribe: FakeTranscribe, clock: FakeClock
) -> None:
    transcribe.errors["start_transcription_job"] = [client_error("BadRequestException", 400)]
    with pytest.raises(TranscriptionRejected, match="BadRequestException"):
        transcriber(s3, transcribe, clock).transcribe(AUDIO, job_id="1", **OGG)
    assert s3.objects == {}
    assert "delete_transcription_job" not in transcribe.methods(), "no job was started"


def test_error_messages_hold_neither_the_audio_nor_the_error_text(
    s3: FakeS3, transcribe: FakeTranscribe, clock: FakeClock
) -> None:
    transcribe.errors["start_transcription_job"] = [client_error("AccessDeniedException", 400)]
    with pytest.raises(TranscriptionRejected) as caught:
        transcriber(s3, transcribe, clock).transcribe(AUDIO, job_id="1", **OGG)
    assert str(caught.value) == "StartTranscriptionJob: AccessDeniedException (HTTP 400)"


# --- cleanup ----------------------------------------------------------------------------------------------


def test_cleanup_failures_are_logged_and_the_transcript_still_returned(
    s3: FakeS3, transcribe: FakeTranscribe, clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    # Given deleting the objects and the job fails
    s3.errors["delete_object"] = client_error("AccessDenied", 403, "DeleteObject")
    transcribe.errors["delete_transcription_job"] = [client_error("ThrottlingException")]
    # When a note is transcribed
    with caplog.at_level(logging.WARNING):
        result = transcriber(s3, transcribe, clock).transcribe(AUDIO, job_id="3", **OGG)
    # Then the words come back, and each deletion was tried and logged
    assert result.text == "hello there"
    assert [p["Key"] for m, p in s3.calls if m == "delete_object"] == ["voice/3.ogg", "voice/3.json"]
    assert transcribe.methods().count("delete_transcription_job") == 1
    assert len([r for r in caplog.records if "voice cleanup failed" in r.getMessage()]) == 3


def test_a_cleanup_failure_does_not_hide_the_real_error(s3: FakeS3, clock: FakeClock) -> None:
    transcribe = FakeTranscribe(s3, statuses=["FAILED"])
    transcribe.failure_reason = "Unsupported media"
    transcribe.errors["delete_transcription_job"] = [RuntimeError("boom")]
    s3.errors["delete_object"] = EndpointConnectionError(endpoint_url="https://s3.amazonaws.com")
    with pytest.raises(TranscriptionRejected, match="Unsupported media"):
        transcriber(s3, transcribe, clock).transcribe(AUDIO, job_id="1", **OGG)


# --- PollySpeaker -----------------------------------------------------------------------------------------


@pytest.fixture
def polly(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Any, Stubber]]:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    client = boto3.client("polly", region_name="us-east-1")
    with Stubber(client) as stub:
        yield client, stub
        stub.assert_no_pending_responses()


def test_polly_speaks_ogg_opus_at_48_khz_with_the_voice_and_engine(polly: tuple[Any, Stubber]) -> None:
    client, stub = polly
    # Given Polly answering with audio
    sound = b"OggS" + b"\x01" * 64
    stub.add_response(
        "synthesize_speech",
        {"AudioStream": StreamingBody(io.BytesIO(sound), len(sound)), "ContentType": "audio/ogg"},
        {
            "OutputFormat": "ogg_opus",
            "SampleRate": "48000",
            "Text": "Hello there, Ann.",
            "TextType": "text",
            "VoiceId": "Matthew",
            "Engine": "generative",
        },
    )
    speaker: Speaker = PollySpeaker(lambda: client, voice_id="Matthew", engine="generative")
    # When a reply is spoken
    spoken = speaker.synthesize("Hello there, Ann.")
    # Then the whole stream comes back, with the characters Polly bills
    assert (spoken.ogg_opus, spoken.seconds, spoken.characters) == (sound, 0.0, 17)


def test_polly_defaults_to_joanna_neural(polly: tuple[Any, Stubber]) -> None:
    client, stub = polly
    stub.add_response(
        "synthesize_speech",
        {"AudioStream": StreamingBody(io.BytesIO(b"OggS"), 4)},
        {
            "OutputFormat": "ogg_opus",
            "SampleRate": "48000",
            "Text": "Hi",
            "TextType": "text",
            "VoiceId": "Joanna",
            "Engine": "neural",
        },
    )
    assert PollySpeaker(lambda: client).synthesize("Hi").ogg_opus == b"OggS"


@pytest.mark.parametrize(
    ("code", "status"),
    [
        ("TextLengthExceededException", 400),
        ("EngineNotSupportedException", 400),
        ("ServiceFailureException", 500),
    ],
)
def test_polly_errors_become_speech_errors_without_the_text(
    polly: tuple[Any, Stubber], code: str, status: int
) -> None:
    client, stub = polly
    stub.add_client_error("synthesize_speech", service_error_code=code, http_status_code=status)
    with pytest.raises(SpeechError) as caught:
        PollySpeaker(lambda: client).synthesize("my secret plans")
    assert str(caught.value) == f"SynthesizeSpeech: {code} (HTTP {status})"


class BrokenPolly:
    def __init__(self, error: Exception | None = None, audio: bytes = b"") -> None:
        self.error = error
        self.audio = audio
        self.calls = 0

    def synthesize_speech(self, **_: Any) -> dict[str, Any]:
        self.calls += 1
        if self.error is not None:
            raise self.error
        return {"AudioStream": Body(self.audio)}


def test_polly_out_of_reach_is_a_speech_error() -> None:
    broken = BrokenPolly(EndpointConnectionError(endpoint_url="https://polly.us-east-1.amazonaws.com"))
    with pytest.raises(SpeechError, match="EndpointConnectionError"):
        PollySpeaker(lambda: broken).synthesize("Hi")


def test_polly_returning_no_audio_is_a_speech_error() -> None:
    with pytest.raises(SpeechError, match="no audio"):
        PollySpeaker(lambda: BrokenPolly()).synthesize("Hi")


def test_nothing_to_say_makes_no_call() -> None:
    polly = BrokenPolly(audio=b"OggS")
    with pytest.raises(SpeechError):
        PollySpeaker(lambda: polly).synthesize("  \n")
    assert polly.calls == 0


def test_an_unknown_engine_is_refused_up_front() -> None:
    with pytest.raises(ValueError, match="engine"):
        PollySpeaker(lambda: BrokenPolly(), engine="turbo")


# --- speakable_text -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("markdown", "expected"),
    [
        ("Plain words.", "Plain words."),
        ("Run `pip install x` first.", "Run first."),
        (
            "Try this:\n\n```python\nprint('hi')\n```\n\nThen this:\n\n~~~\nls\n~~~\n\nDone.",
            f"Try this: {CODE_NOTE}. Then this: Done.",
        ),
        ("Unclosed:\n```\ncode to the end\nmore", f"Unclosed: {CODE_NOTE}."),
        ("See [the docs](https://example.com/a_(b)) now.", "See the docs now."),
        ("Read [it][1].\n\n[1]: https://example.com", "Read it."),
        ("![a chart](chart.png) Sales rose.", "Sales rose."),
        ("Go to https://example.com/x?y=1. Or www.example.org, maybe.", "Go to. Or, maybe."),
        ("Link: <https://example.com>", "Link"),
        ("# Title\n## Sub ##\nText", "Title. Sub. Text."),
        ("Setext\n======\nBody", "Setext. Body."),
        ("- eggs\n- *milk*\n* [x] tea\n1. bread\n2) jam", "eggs. milk. tea. bread. jam."),
        ("> a **bold** and _soft_ quote\n> on two lines", "a bold and soft quote on two lines."),
        ("snake_case_name and 2 * 3 * 4 stay", "snake_case_name and 2 * 3 * 4 stay."),
        ("~~old~~ new, __strong__", "old new, strong."),
        ("| Item | Price |\n|------|------:|\n| Tea | 2 € |\n| Cake | |", "Item, Price. Tea, 2 €. Cake."),
        ("Hello <b>you</b><br>there", "Hello you there."),
        ("Escaped \\*stars\\* and \\# hash", "Escaped *stars* and # hash."),
        ("Great job 🎉\n\nSee you 👋", "Great job 🎉. See you 👋."),
        ("Line one\nline two\n\n\n   \n\nNext", "Line one line two. Next."),
        ("<!-- hidden -->Shown", "Shown."),
        ("---\n\n`only code`\n\nhttps://example.com", ""),
        ("", ""),
    ],
)
def test_speakable_text_keeps_the_words_and_drops_the_markup(markdown: str, expected: str) -> None:
    assert speakable_text(markdown, 1000) == expected


def test_only_the_first_code_block_is_mentioned() -> None:
    text = speakable_text("A\n```\nx\n```\nB\n```\ny\n```\nC\n```\nz\n```", 1000)
    assert text.count("code in the text") == 1


def test_a_long_text_is_cut_at_the_last_sentence_end_with_an_ellipsis() -> None:
    text = "First sentence here. Second one is here! Third one runs on and on and on."
    assert speakable_text(text, 45) == "First sentence here. Second one is here!…"


def test_without_a_sentence_end_late_enough_it_is_cut_at_a_word() -> None:
    text = "Hi. This sentence is far too long to fit into the limit, so it is cut between words."
    cut = speakable_text(text, 40)
    assert cut == "Hi. This sentence is far too long to…"
    assert len(cut) <= 40


def test_a_single_long_word_is_cut_inside() -> None:
    assert speakable_text("Pneumonoultramicroscopicsilicovolcanoconiosis", 10) == "Pneumonou…"


@pytest.mark.parametrize("limit", [0, -5])
def test_no_room_is_no_text(limit: int) -> None:
    assert speakable_text("Hello.", limit) == ""


def test_a_text_that_fits_is_not_cut() -> None:
    assert speakable_text("Exactly this.", 13) == "Exactly this."


def test_the_limit_is_always_kept() -> None:
    # Given replies of many shapes, and every limit up to their length
    replies = [
        "One. Two! Three? Four.",
        "# Plan\n- buy eggs\n- call [Ann](https://a.example)\n\n```\ncode\n```\nThen rest, and sleep well.",
        "word " * 40,
        "🎉" * 30,
        "A sentence with a very long tail that never ends because it keeps going and going",
    ]
    for reply in replies:
        full = speakable_text(reply, 10_000)
        for limit in range(1, len(full) + 2):
            # When each is cut to the limit
            cut = speakable_text(reply, limit)
            # Then it fits, and a cut text ends in the ellipsis and starts as the full one does
            assert len(cut) <= limit, (reply, limit, cut)
            if cut != full:
                assert cut.endswith("…")
                assert full.startswith(cut[:-1].rstrip(" ,;:(-"))
