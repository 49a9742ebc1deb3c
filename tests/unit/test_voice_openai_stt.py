"""Tests for OpenAICompatibleTranscriber over a scripted urllib3 pool (the real HttpTransport, no sockets)."""

from __future__ import annotations

import json
import traceback
from typing import Any

import pytest
from support import scripted_http
from support.scripted_http import Answer
from urllib3.exceptions import ProtocolError

from stepwise.voice.models import Transcriber, TranscriptionRejected, TranscriptionTransient
from stepwise.voice.openai_stt import OpenAICompatibleTranscriber
from stepwise_local.fake_speech import FormField, parse_multipart

KEY = "sk-unit-test-SECRET-key-0123456789"
HOST = "stt.example.test"
BASE_URL = f"https://{HOST}/v1/"
AUDIO = b"OggS\x00\x02" + bytes(range(256)) * 4


class ScriptedPool(scripted_http.ScriptedPool):
    """The scripted pool, reading the multipart fields a request sent."""

    def fields(self, index: int = -1) -> dict[str, FormField]:
        request = self.requests[index]
        assert isinstance(request.body, bytes)
        return parse_multipart(request.headers["Content-Type"], request.body)


class Harness:
    def __init__(self, answers: list[Answer], **options: Any) -> None:
        self.pool = ScriptedPool(answers)
        self.sleeps: list[float] = []
        self.key_calls = 0
        key = options.pop("key", KEY)

        def api_key() -> str:
            self.key_calls += 1
            return str(key)

        self.transcriber = OpenAICompatibleTranscriber(
            options.pop("base_url", BASE_URL),
            api_key,
            options.pop("model", "whisper-1"),
            transport=self.pool.transport(),
            sleep=self.sleeps.append,
            **options,
        )

    def transcribe(
        self, audio: bytes = AUDIO, *, mime_type: str | None = None, file_name: str | None = None
    ) -> Any:
        return self.transcriber.transcribe(
            audio, job_id="chat-1-msg-7", mime_type=mime_type, file_name=file_name
        )


def openai_error(message: str, code: str | None = None) -> dict[str, Any]:
    return {"error": {"message": message, "type": "invalid_request_error", "param": None, "code": code}}


# -- the request ----------------------------------------------------------------------------------------


def test_the_request_is_a_multipart_post_with_the_audio_model_language_and_bearer_key() -> None:
    # Given a transcriber for a base URL with a trailing slash, a model and a language
    harness = Harness([(200, {"text": " Buy milk tomorrow. "})], language="de")
    # When a voice note is transcribed
    transcript = harness.transcribe()
    # Then one POST went to {base_url}/audio/transcriptions with the Bearer key
    [request] = harness.pool.requests
    assert request.method == "POST"
    assert request.url == "https://stt.example.test/v1/audio/transcriptions"
    assert request.headers["Authorization"] == f"Bearer {KEY}"
    assert request.headers["Content-Type"].startswith("multipart/form-data; boundary=")
    # And the form holds the audio as `file` (voice.ogg, audio/ogg), the model, the language and json
    fields = harness.pool.fields()
    assert fields["file"].data == AUDIO
    assert fields["file"].file_name == "voice.ogg"
    assert fields["file"].content_type == "audio/ogg"
    assert fields["model"].text == "whisper-1"
    assert fields["language"].text == "de"
    assert fields["response_format"].text == "json"
    assert set(fields) == {"file", "model", "language", "response_format"}
    # And both time-outs are passed (connect, read)
    assert harness.pool.timeouts == [(5.0, 30.0)]
    # And the transcript is the trimmed text; no duration in the answer gives 0 seconds
    assert transcript.text == "Buy milk tomorrow."
    assert transcript.transcriber == "openai"
    assert transcript.seconds == 0.0
    assert transcript.language == "de"


def test_the_transcriber_fits_the_protocol_and_reads_the_key_only_when_transcribing() -> None:
    # Given a freshly built transcriber
    harness = Harness([(200, {"text": "hi"})])
    transcriber: Transcriber = harness.transcriber
    # Then its name is "openai" and the key was not read yet
    assert transcriber.name == "openai"
    assert harness.key_calls == 0
    # When it transcribes, the key is read once
    harness.transcribe()
    assert harness.key_calls == 1


def test_without_a_key_no_authorization_header_and_without_a_language_no_language_field() -> None:
    # Given a self-hosted server that needs no key, and no language set
    harness = Harness([(200, {"text": "hi"})], key="", base_url="http://whisper.local:8000/v1")
    # When a note is transcribed
    transcript = harness.transcribe()
    # Then no Authorization header and no language field were sent
    [request] = harness.pool.requests
    assert "Authorization" not in request.headers
    assert "language" not in harness.pool.fields()
    assert request.url == "http://whisper.local:8000/v1/audio/transcriptions"
    assert transcript.language is None


@pytest.mark.parametrize(
    ("file_name", "mime_type", "sent_name", "sent_type"),
    [
        ("file_42.oga", "audio/ogg", "file_42.ogg", "audio/ogg"),
        ("voice/file_42.oga", None, "file_42.ogg", "audio/ogg"),
        ("song.mp3", "audio/mpeg", "song.mp3", "audio/mpeg"),
        ("recording", "audio/wav", "recording.wav", "audio/wav"),
        (None, "audio/mpeg", "voice.ogg", "audio/mpeg"),
    ],
)
def test_the_file_name_and_content_type_come_from_the_note(
    file_name: str | None, mime_type: str | None, sent_name: str, sent_type: str
) -> None:
    # Given a note with (or without) a file name and a MIME type
    harness = Harness([(200, {"text": "hi"})])
    # When it is transcribed
    harness.transcribe(file_name=file_name, mime_type=mime_type)
    # Then the upload is named with an extension the APIs know and typed as the note says
    upload = harness.pool.fields()["file"]
    assert (upload.file_name, upload.content_type) == (sent_name, sent_type)


def test_language_and_duration_in_the_answer_are_used() -> None:
    # Given a server answering verbose_json-like fields, with extra fields to ignore
    body = {"task": "transcribe", "language": "english", "duration": 3.25, "text": "hello", "segments": []}
    harness = Harness([(200, body)], language="en")
    # When a note is transcribed
    transcript = harness.transcribe()
    # Then the server's language and duration are taken
    assert (transcript.text, transcript.language, transcript.seconds) == ("hello", "english", 3.25)


@pytest.mark.parametrize("duration", [-1, "3.0", True, None])
def test_a_duration_that_is_not_a_number_of_seconds_gives_zero(duration: Any) -> None:
    # Given an answer whose duration is unusable
    harness = Harness([(200, {"text": "hi", "duration": duration})])
    # When a note is transcribed / Then seconds is 0 (the caller fills it from Telegram)
    assert harness.transcribe().seconds == 0.0


def test_an_empty_transcript_is_empty_text_not_an_error() -> None:
    # Given silence: the server answers an empty text
    harness = Harness([(200, {"text": "  "})])
    # When it is transcribed / Then the text is ""
    assert harness.transcribe().text == ""


# -- retries ---------------------------------------------------------------------------------------------


def test_429_and_5xx_are_retried_with_backoff_then_succeed() -> None:
    # Given a server that throttles, then fails, then answers
    harness = Harness([(429, openai_error("Rate limit")), (503, b"busy"), (200, {"text": "finally"})])
    # When a note is transcribed
    transcript = harness.transcribe()
    # Then it came through on the third attempt after waiting 1 s then 2 s
    assert transcript.text == "finally"
    assert len(harness.pool.requests) == 3
    assert harness.sleeps == [1.0, 2.0]
    # And every attempt sent the whole audio again
    assert all(harness.pool.fields(i)["file"].data == AUDIO for i in range(3))


@pytest.mark.parametrize("status", [429, 500, 502, 503, 504])
def test_retryable_statuses_end_in_transient_after_the_retries(status: int) -> None:
    # Given a server failing with `status` on every attempt
    harness = Harness([(status, openai_error("The server had an error"))] * 3)
    # When a note is transcribed
    with pytest.raises(TranscriptionTransient) as caught:
        harness.transcribe()
    # Then it tried 1 + max_retries times and gave up with the status in the message
    assert len(harness.pool.requests) == 3
    assert harness.sleeps == [1.0, 2.0]
    assert f"HTTP {status}" in str(caught.value)
    assert "The server had an error" in str(caught.value)


@pytest.mark.parametrize(
    "failure",
    [
        scripted_http.read_timeout(host=HOST),
        scripted_http.connect_timeout(HOST),
        scripted_http.refused(HOST),
        scripted_http.connection_lost(),
    ],
    ids=["read-timeout", "connect-timeout", "refused", "reset"],
)
def test_time_outs_and_connection_errors_are_retried_then_transient(failure: Exception) -> None:
    # Given a server that never answers in time (or drops the connection)
    harness = Harness([failure, failure, failure])
    # When a note is transcribed
    with pytest.raises(TranscriptionTransient) as caught:
        harness.transcribe()
    # Then all three attempts were made and the error names the failure
    assert len(harness.pool.requests) == 3
    assert harness.sleeps == [1.0, 2.0]
    assert type(failure).__name__ in str(caught.value)


def test_a_time_out_then_an_answer_succeeds() -> None:
    # Given one time-out, then an answer
    harness = Harness([scripted_http.read_timeout(host=HOST), (200, {"text": "ok"})])
    # When a note is transcribed / Then the second attempt's text comes back after one wait
    assert harness.transcribe().text == "ok"
    assert harness.sleeps == [1.0]


def test_max_retries_bounds_the_attempts() -> None:
    # Given a transcriber that may not retry
    harness = Harness([(500, b"")], max_retries=0)
    # When the only attempt fails / Then it is Transient at once, without waiting
    with pytest.raises(TranscriptionTransient):
        harness.transcribe()
    assert len(harness.pool.requests) == 1
    assert harness.sleeps == []


@pytest.mark.parametrize(
    ("retry_after", "waited"),
    [
        ("7", 7.0),
        ("0.5", 0.5),
        ("20", 20.0),
        ("21", 1.0),
        ("3600", 1.0),
        ("Wed, 21 Oct 2015 07:28:00 GMT", 1.0),
    ],
)
def test_retry_after_is_honoured_when_it_is_up_to_20_seconds(retry_after: str, waited: float) -> None:
    # Given a 429 with a Retry-After header, then an answer
    harness = Harness([(429, openai_error("slow down"), {"Retry-After": retry_after}), (200, {"text": "ok"})])
    # When a note is transcribed
    harness.transcribe()
    # Then the wait is the server's when it is a number of seconds up to 20, else the 1 s backoff
    assert harness.sleeps == [waited]


# -- refusals --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("status", [400, 413, 415, 422])
def test_the_audio_refused_for_good_is_rejected_without_retry(status: int) -> None:
    # Given a server refusing the audio
    harness = Harness([(status, openai_error("Invalid file format. Supported formats: ['ogg']"))])
    # When a note is transcribed
    with pytest.raises(TranscriptionRejected) as caught:
        harness.transcribe()
    # Then it was tried once, without waiting, and the log learns the status and the server's message
    assert len(harness.pool.requests) == 1
    assert harness.sleeps == []
    assert f"HTTP {status}" in str(caught.value)
    assert "Invalid file format" in str(caught.value)


@pytest.mark.parametrize("status", [401, 403, 404])
def test_a_wrong_key_url_or_model_is_rejected_with_a_hint(status: int) -> None:
    # Given a server refusing the key, the URL or the model
    harness = Harness([(status, openai_error("The model `whisper-9` does not exist"))])
    # When a note is transcribed
    with pytest.raises(TranscriptionRejected) as caught:
        harness.transcribe()
    # Then it was not retried and the message points at the settings
    assert len(harness.pool.requests) == 1
    message = str(caught.value)
    assert f"HTTP {status}" in message
    assert "API key" in message and "base URL" in message and "model" in message


def test_a_fastapi_style_detail_is_the_servers_message() -> None:
    # Given a self-hosted server answering {"detail": ...}
    harness = Harness([(422, {"detail": "field required: file"})])
    # When a note is transcribed / Then the detail is in the error
    with pytest.raises(TranscriptionRejected, match="field required: file"):
        harness.transcribe()


def test_the_servers_message_is_cut_to_200_characters() -> None:
    # Given a server with a very long error message
    harness = Harness([(400, openai_error("x" * 5000))])
    # When a note is transcribed
    with pytest.raises(TranscriptionRejected) as caught:
        harness.transcribe()
    # Then at most 200 characters of it are in the error
    assert "x" * 201 not in str(caught.value)
    assert "x" * 150 in str(caught.value)


@pytest.mark.parametrize(
    "body",
    [
        b"<html>hello</html>",
        b"",
        json.dumps({"transcript": "hi"}).encode(),
        json.dumps({"text": 42}).encode(),
        json.dumps(["hi"]).encode(),
        json.dumps({"text": None}).encode(),
    ],
)
def test_a_200_without_a_string_text_is_rejected(body: bytes) -> None:
    # Given a server answering 200 with a body that is not {"text": "..."}
    harness = Harness([(200, body)])
    # When a note is transcribed
    with pytest.raises(TranscriptionRejected, match="HTTP 200"):
        harness.transcribe()
    # Then it was not retried
    assert len(harness.pool.requests) == 1


def test_an_invalid_base_url_is_rejected() -> None:
    # Given a base URL without its scheme
    transcriber = OpenAICompatibleTranscriber(
        "stt.example.test/v1", lambda: KEY, "whisper-1", sleep=lambda _: None
    )
    # When a note is transcribed / Then it is Rejected (trying again cannot help)
    with pytest.raises(TranscriptionRejected, match="base URL"):
        transcriber.transcribe(AUDIO, job_id="j", mime_type=None, file_name=None)


# -- the key stays secret --------------------------------------------------------------------------------


def _everything_about(error: BaseException) -> str:
    return str(error) + repr(error) + "".join(traceback.format_exception(error))


@pytest.mark.parametrize(
    ("answer", "error_type"),
    [
        (
            (401, openai_error(f"Incorrect API key provided: {KEY}.", "invalid_api_key")),
            TranscriptionRejected,
        ),
        ((400, openai_error("y" * 180 + f" key={KEY}")), TranscriptionRejected),
        ((500, f"upstream said Authorization: Bearer {KEY}".encode()), TranscriptionTransient),
        (ProtocolError(f"Connection aborted: proxy refused Bearer {KEY}"), TranscriptionTransient),
        # what http.client raises for a header value it refuses (before anything is sent)
        (ValueError(f"Invalid header value {f'Bearer {KEY}'.encode()!r}"), TranscriptionRejected),
    ],
)
def test_the_key_never_shows_in_errors_even_when_the_server_echoes_it(
    answer: Answer, error_type: type[Exception]
) -> None:
    # Given a server (or a library error) that echoes the key back
    harness = Harness([answer] * 3)
    # When a note is transcribed
    with pytest.raises(error_type) as caught:
        harness.transcribe()
    # Then neither the error's text, its repr nor its traceback holds the key, nor a piece of it
    everything = _everything_about(caught.value)
    assert KEY not in everything
    assert KEY[:10] not in everything
    assert "<redacted>" in str(caught.value)


def test_the_repr_shows_no_key() -> None:
    # Given a transcriber whose key has been read
    harness = Harness([(200, {"text": "hi"})])
    harness.transcribe()
    # Then its repr names the URL and model, not the key
    shown = repr(harness.transcriber) + str(harness.transcriber)
    assert KEY not in shown
    assert "stt.example.test" in shown and "whisper-1" in shown
    assert KEY not in repr(vars(harness.transcriber))
