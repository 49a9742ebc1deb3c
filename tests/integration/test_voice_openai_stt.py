"""OpenAICompatibleTranscriber against FakeSpeechToText over real HTTP on 127.0.0.1."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from typing import Any

import pytest
import requests
from support.network import refusing_base_url

from stepwise.voice.models import TranscriptionRejected, TranscriptionTransient
from stepwise.voice.openai_stt import OpenAICompatibleTranscriber
from stepwise_local.fake_speech import FakeSpeechToText

KEY = "sk-integration-stt-key-abcdef"
AUDIO = b"OggS\x00\x02\x00\x00" + b"\x00\r\n--\xff" * 64  # an Ogg header is enough: nothing decodes it


@pytest.fixture
def server() -> Iterator[FakeSpeechToText]:
    with FakeSpeechToText(KEY) as fake:
        yield fake


def transcriber_for(
    base_url: str, key: str = KEY, sleeps: list[float] | None = None, **options: Any
) -> OpenAICompatibleTranscriber:
    waits = sleeps if sleeps is not None else []
    return OpenAICompatibleTranscriber(
        base_url,
        lambda: key,
        "whisper-1",
        sleep=waits.append,
        **options,
    )


def test_a_transcript_comes_back_and_the_server_saw_the_key_model_and_file(server: FakeSpeechToText) -> None:
    # Given a server that knows this note's words
    server.add_transcript(AUDIO, " Remind me to call Anna at five. ")
    transcriber = transcriber_for(server.base_url, language="en")
    # When the note is transcribed
    transcript = transcriber.transcribe(AUDIO, job_id="42-7", mime_type="audio/ogg", file_name="file_7.oga")
    # Then its words come back
    assert transcript.text == "Remind me to call Anna at five."
    assert transcript.transcriber == "openai"
    # And the server received the Bearer key, the model, the language and the exact bytes
    [seen] = server.requests
    assert seen["authorization"] == f"Bearer {KEY}"
    assert seen["model"] == "whisper-1"
    assert seen["language"] == "en"
    assert seen["file_name"] == "file_7.ogg"
    assert seen["content_type"] == "audio/ogg"
    assert seen["size"] == len(AUDIO)
    assert seen["sha256"] == hashlib.sha256(AUDIO).hexdigest()
    assert seen["status"] == 200


def test_an_unknown_note_gets_the_default_text(server: FakeSpeechToText) -> None:
    # Given a note the server has no transcript for
    transcriber = transcriber_for(server.base_url)
    # When it is transcribed / Then the server's default text comes back, without a language field sent
    assert transcriber.transcribe(b"OggS-other", job_id="j", mime_type=None, file_name=None).text == (
        "hello from a voice note"
    )
    assert server.requests[0]["language"] is None
    assert server.requests[0]["file_name"] == "voice.ogg"


def test_a_429_once_then_success(server: FakeSpeechToText) -> None:
    # Given a server that throttles the first request, asking for a 3 s wait
    server.fail_next(429, retry_after=3)
    sleeps: list[float] = []
    transcriber = transcriber_for(server.base_url, sleeps=sleeps)
    # When a note is transcribed
    transcript = transcriber.transcribe(AUDIO, job_id="j", mime_type=None, file_name=None)
    # Then the second request got the transcript, after the wait the server asked for
    assert transcript.text == "hello from a voice note"
    assert [seen["status"] for seen in server.requests] == [429, 200]
    assert sleeps == [3.0]


def test_500_three_times_is_transient(server: FakeSpeechToText) -> None:
    # Given a server failing every attempt
    server.fail_next(500, times=3)
    sleeps: list[float] = []
    transcriber = transcriber_for(server.base_url, sleeps=sleeps)
    # When a note is transcribed
    with pytest.raises(TranscriptionTransient, match="HTTP 500"):
        transcriber.transcribe(AUDIO, job_id="j", mime_type=None, file_name=None)
    # Then it tried three times, backing off 1 s then 2 s
    assert [seen["status"] for seen in server.requests] == [500, 500, 500]
    assert sleeps == [1.0, 2.0]


def test_a_file_that_is_not_audio_is_rejected_without_retry(server: FakeSpeechToText) -> None:
    # Given a "voice note" that is really a PDF
    transcriber = transcriber_for(server.base_url)
    # When it is transcribed
    with pytest.raises(TranscriptionRejected, match=r"HTTP 400.*Invalid file format"):
        transcriber.transcribe(b"%PDF-1.7 not audio", job_id="j", mime_type="audio/ogg", file_name=None)
    # Then the server was asked once
    assert [seen["status"] for seen in server.requests] == [400]


def test_a_slow_answer_past_the_timeout_is_transient(server: FakeSpeechToText) -> None:
    # Given a server answering every attempt later than the transcriber waits
    server.slow_next(1.0, times=2)
    transcriber = transcriber_for(server.base_url, timeout_seconds=0.2, max_retries=1)
    # When a note is transcribed
    with pytest.raises(TranscriptionTransient, match="Timeout"):
        transcriber.transcribe(AUDIO, job_id="j", mime_type=None, file_name=None)
    # Then both attempts reached the server
    assert len(server.requests) == 2


def test_a_slow_answer_within_the_timeout_is_awaited(server: FakeSpeechToText) -> None:
    # Given a server answering a little late, within the transcriber's patience
    server.slow_next(0.2)
    transcriber = transcriber_for(server.base_url, timeout_seconds=10.0)
    # When a note is transcribed / Then the transcript comes back from the first attempt
    assert transcriber.transcribe(AUDIO, job_id="j", mime_type=None, file_name=None).text
    assert len(server.requests) == 1


def test_a_wrong_key_is_rejected_and_the_key_is_not_in_the_error(server: FakeSpeechToText) -> None:
    # Given a transcriber with the wrong key
    wrong = "sk-wrong-key-0000000000000"
    transcriber = transcriber_for(server.base_url, key=wrong)
    # When a note is transcribed
    with pytest.raises(TranscriptionRejected) as caught:
        transcriber.transcribe(AUDIO, job_id="j", mime_type=None, file_name=None)
    # Then it is a 401 pointing at the settings, once, and the key is not in the error
    assert "HTTP 401" in str(caught.value) and "API key" in str(caught.value)
    assert wrong not in str(caught.value)
    assert [seen["status"] for seen in server.requests] == [401]
    assert server.requests[0]["authorization"] == f"Bearer {wrong}"


def test_a_base_url_without_v1_is_rejected(server: FakeSpeechToText) -> None:
    # Given a base URL missing its /v1
    transcriber = transcriber_for(server.base_url.removesuffix("/v1"))
    # When a note is transcribed / Then the 404 is Rejected with the settings hint
    with pytest.raises(TranscriptionRejected, match=r"HTTP 404.*base URL"):
        transcriber.transcribe(AUDIO, job_id="j", mime_type=None, file_name=None)


def test_a_server_without_keys_gets_no_authorization_header() -> None:
    # Given a self-hosted server that asks for no key, and a transcriber with none
    with FakeSpeechToText(api_key=None) as server:
        transcriber = transcriber_for(server.base_url, key="")
        # When a note is transcribed / Then it works and no Authorization header arrived
        assert transcriber.transcribe(AUDIO, job_id="j", mime_type=None, file_name=None).text
        assert server.requests[0]["authorization"] is None
        assert not any(name.lower() == "authorization" for name in server.requests[0]["headers"])


def test_a_refused_connection_is_transient() -> None:
    # Given a base URL where nothing listens
    with refusing_base_url() as base_url:
        sleeps: list[float] = []
        transcriber = transcriber_for(base_url + "/v1", sleeps=sleeps)
        # When a note is transcribed / Then it is Transient after the retries
        with pytest.raises(TranscriptionTransient, match="ConnectionError"):
            transcriber.transcribe(AUDIO, job_id="j", mime_type=None, file_name=None)
        assert sleeps == [1.0, 2.0]


# -- the fake itself ---------------------------------------------------------------------------------


def _post(server: FakeSpeechToText, **kwargs: Any) -> requests.Response:
    return requests.post(f"{server.base_url}/audio/transcriptions", timeout=10, **kwargs)


@pytest.mark.parametrize(
    ("data", "files"),
    [
        ({"model": "whisper-1"}, None),
        ({}, {"file": ("a.ogg", AUDIO, "audio/ogg")}),
        ({"model": "whisper-1", "language": "english"}, {"file": ("a.ogg", AUDIO, "audio/ogg")}),
    ],
)
def test_the_fake_refuses_incomplete_forms_with_an_openai_error(
    server: FakeSpeechToText, data: dict[str, str], files: dict[str, object] | None
) -> None:
    # When a form lacks the file or the model, or has a bad language
    response = _post(server, headers={"Authorization": f"Bearer {KEY}"}, data=data, files=files)
    # Then the answer is a 400 with an OpenAI-style error object
    assert response.status_code == 400
    error = response.json()["error"]
    assert set(error) >= {"message", "type", "code"}
    assert error["type"] == "invalid_request_error"


def test_the_fake_refuses_a_body_that_is_not_multipart(server: FakeSpeechToText) -> None:
    response = _post(server, headers={"Authorization": f"Bearer {KEY}"}, json={"model": "whisper-1"})
    assert response.status_code == 400
    assert "error" in response.json()


@pytest.mark.parametrize(
    "audio",
    [
        b"OggS\x00",
        b"RIFF\x24\x00\x00\x00WAVEfmt ",
        b"fLaC\x00\x00\x00\x22",
        b"ID3\x04\x00",
        b"\xff\xfb\x90\x64",
        b"\x00\x00\x00\x20ftypM4A ",
    ],
)
def test_the_fake_accepts_the_audio_formats_by_their_first_bytes(
    server: FakeSpeechToText, audio: bytes
) -> None:
    response = _post(
        server,
        headers={"Authorization": f"Bearer {KEY}"},
        data={"model": "whisper-1"},
        files={"file": ("a", audio, "application/octet-stream")},
    )
    assert response.status_code == 200
    assert response.json() == {"text": "hello from a voice note"}


@pytest.mark.parametrize("audio", [b"RIFF\x24\x00\x00\x00AVI ", b"\x89PNG\r\n", b"", b"Ogg"])
def test_the_fake_refuses_what_is_not_audio(server: FakeSpeechToText, audio: bytes) -> None:
    response = _post(
        server,
        headers={"Authorization": f"Bearer {KEY}"},
        data={"model": "whisper-1"},
        files={"file": ("a.ogg", audio, "audio/ogg")},
    )
    assert response.status_code == 400
    assert response.json()["error"]["message"].startswith("Invalid file format")


def test_the_fake_answers_unknown_paths_with_404(server: FakeSpeechToText) -> None:
    response = requests.post(f"{server.base_url}/audio/translations", timeout=10)
    assert response.status_code == 404
