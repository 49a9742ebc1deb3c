"""Voice notes through the real state machine: the wiring (a note heard by an OpenAI-compatible speech-to-text
server on 127.0.0.1 with its key from SSM, answered, stored in DynamoDB), the key in no log or table, a
transcriber that does not answer in time, a retried LoadContext transcribing once, a sendVoice retried by the
state machine, Amazon Transcribe and Polly on moto, and PocketSphinx hearing a real note end to end. What
the user sees of notes heard, refused, failed and spoken is tested on the in-memory stack
(tests/behaviour/test_voice.py)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from support.stack import Stack

from stepwise.states.voice_turn import NOTICE_REJECTED, NOTICE_TRANSIENT
from stepwise_local import updates
from stepwise_local.anthropic_server import text as answer
from stepwise_local.fake_speech import FakeSpeechToText

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "voice"
# Made-up Ogg pages: the fake speech-to-text server checks the signature, not the sound.
NOTE = b"OggS\x00\x02" + bytes(range(200)) * 20
KEY = "sk-test-voice-key-0123456789abcdef"
KEY_PARAMETER = "/stepwise/voice-transcription-key"


@pytest.fixture(scope="module")
def speech() -> Iterator[FakeSpeechToText]:
    with FakeSpeechToText(api_key=KEY) as server:
        yield server


@pytest.fixture
def openai_stack(stack: Stack, speech: FakeSpeechToText) -> Stack:
    """The stack with VOICE_TRANSCRIBER=openai pointed at the fake speech-to-text server, its key in SSM."""
    speech.reset()
    stack.emulation.put_parameter(KEY_PARAMETER, KEY)
    stack.emulation.config.env.update(
        {
            "VOICE_TRANSCRIBER": "openai",
            "VOICE_TRANSCRIPTION_URL": speech.base_url,
            "VOICE_TRANSCRIPTION_KEY_PARAMETER": KEY_PARAMETER,
            "VOICE_TRANSCRIPTION_MODEL": "whisper-large-v3-turbo",
        }
    )
    return stack


def send_note(
    stack: Stack,
    user: int,
    data: bytes = NOTE,
    *,
    caption: str | None = None,
    duration: int = 4,
    **extra: Any,
) -> dict[str, Any]:
    """Put the note on the fake Telegram, post its update, wait for its turn; returns the execution."""
    file_id = stack.telegram.add_file(data, f"voice/note_{user}_{len(stack.telegram.calls())}.oga")
    update = updates.voice_message(
        user, file_id=file_id, duration=duration, file_size=len(data), caption=caption, **extra
    )
    assert stack.emulation.post_update(update)["statusCode"] == 200
    return stack.emulation.wait_for_update(user, update["update_id"], timeout=60)


def user_items(stack: Stack, user: int) -> list[dict[str, Any]]:
    return [item for item in stack.stored(user) if item["role"] == "user"]


def scan_all_tables(stack: Stack) -> str:
    """Every item of every table of the template, as one text."""
    texts = []
    for table in stack.emulation.template.tables():
        items = stack.emulation.table(table.logical_id).scan()["Items"]
        texts.append(json.dumps(items, default=str))
    return "\n".join(texts)


def test_a_voice_note_is_answered_like_the_words_it_says(
    openai_stack: Stack, speech: FakeSpeechToText
) -> None:
    stack = openai_stack
    user = stack.new_user()
    # Given a note that says "add oat milk to my list", with a caption
    speech.add_transcript(NOTE, "add oat milk to my list")
    stack.anthropic.script(answer("Added oat milk."))
    # When it arrives
    execution = send_note(stack, user, caption="for saturday")
    # Then the model reads the words, marked as spoken, with the caption beside them
    assert execution["status"] == "SUCCEEDED"
    blocks = stack.anthropic.requests[-1]["messages"][-1]["content"]
    texts = [block["text"] for block in blocks if block["type"] == "text"]
    assert "[voice note, transcribed automatically; its caption: for saturday]" in texts
    assert "add oat milk to my list" in texts
    assert stack.replies(user) == ["Added oat milk."]
    # And the speech-to-text API got the note, the model and the key, once
    (request,) = speech.requests
    assert (request["model"], request["authorization"]) == ("whisper-large-v3-turbo", f"Bearer {KEY}")
    # And the history keeps the transcript as the user's words, the note's file id, never its bytes
    (item,) = user_items(stack, user)
    assert item["content"] == "add oat milk to my list"
    assert json.loads(item["heard"])["status"] == "heard"


def test_the_transcription_key_is_in_no_message_log_or_table(
    openai_stack: Stack,
    speech: FakeSpeechToText,
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    stack = openai_stack
    user = stack.new_user()
    stack.anthropic.script(answer("Heard you."))
    speech.fail_next(401)  # a wrong key: the error is logged, the key must not be
    send_note(stack, user)
    stack.anthropic.script(answer("Heard you."))
    send_note(stack, user)
    seen = capsys.readouterr()
    assert KEY not in seen.out + seen.err + caplog.text
    assert KEY not in json.dumps(stack.telegram.calls())
    assert KEY not in scan_all_tables(stack)
    assert stack.replies(user) == [NOTICE_REJECTED, "Heard you."]


def test_a_transcriber_that_does_not_answer_in_time_gets_the_notice(
    openai_stack: Stack, speech: FakeSpeechToText
) -> None:
    stack = openai_stack
    stack.emulation.config.env["VOICE_TRANSCRIPTION_TIMEOUT_SECONDS"] = "0.5"
    user = stack.new_user()
    speech.slow_next(2.0, times=3)
    execution = send_note(stack, user)
    assert execution["status"] == "SUCCEEDED"
    assert stack.replies(user) == [NOTICE_TRANSIENT]


def test_a_retried_load_context_transcribes_once_and_answers_once(
    openai_stack: Stack, speech: FakeSpeechToText
) -> None:
    stack = openai_stack
    user = stack.new_user()
    speech.add_transcript(NOTE, "remind me about the dentist")
    stack.anthropic.script(answer("Noted."))
    # LoadContext dies after it transcribed and stored everything, twice
    stack.emulation.crash("LoadContextFunction", "after", times=2)
    execution = send_note(stack, user)
    assert execution["status"] == "SUCCEEDED"
    assert len(speech.requests) == 1
    assert stack.replies(user) == ["Noted."]
    (item,) = user_items(stack, user)
    assert item["content"] == "remind me about the dentist"
    usage = stack.emulation.table("UsageTable").scan()["Items"]
    days = [i for i in usage if i["user_id"] == user and str(i["sk"]).startswith("day#")]
    assert [int(day["voice_notes"]) for day in days] == [1]


def test_amazon_polly_speaks_the_answer_as_ogg_opus(openai_stack: Stack, speech: FakeSpeechToText) -> None:
    stack = openai_stack
    stack.emulation.config.env.update({"VOICE_SPEAKER": "polly", "POLLY_ENGINE": "standard"})
    user = stack.new_user()
    stack.say(user, "/voice on")
    stack.anthropic.script(answer("It is sunny today."))
    send_note(stack, user)
    (voice,) = stack.telegram.voices(user)
    assert stack.telegram.voice_bytes(voice).startswith(b"OggS")
    stack.say(user, "/usage")
    assert "18 characters spoken" in stack.replies(user)[-1]


def test_a_speech_failure_never_costs_the_text_reply(openai_stack: Stack, speech: FakeSpeechToText) -> None:
    stack = openai_stack
    # Polly refuses every request: a voice it does not have
    stack.emulation.config.env.update({"VOICE_SPEAKER": "polly", "POLLY_VOICE_ID": "Nobody"})
    user = stack.new_user()
    stack.say(user, "/voice on")
    stack.anthropic.script(answer("Here is the answer."))
    execution = send_note(stack, user)
    assert execution["status"] == "SUCCEEDED"
    assert stack.replies(user)[-1] == "Here is the answer."
    assert stack.telegram.voices(user) == []


def test_a_sendvoice_that_fails_once_is_sent_once_by_the_retry(
    openai_stack: Stack, speech: FakeSpeechToText
) -> None:
    stack = openai_stack
    user = stack.new_user()
    stack.say(user, "/voice on")
    stack.anthropic.script(answer("Once only."))
    stack.telegram.fail_next("sendVoice", 500)
    send_note(stack, user)
    assert stack.replies(user).count("Once only.") == 1
    assert len(stack.telegram.voices(user)) == 1


def test_amazon_transcribe_on_moto_hears_the_note_and_keeps_no_audio(stack: Stack) -> None:
    stack.emulation.config.env["VOICE_TRANSCRIBER"] = "transcribe"
    user = stack.new_user()
    stack.anthropic.script(answer("Got it."))
    send_note(stack, user)
    (item,) = user_items(stack, user)
    assert item["content"] == "hello from amazon transcribe"
    assert boto3.client("s3").list_objects_v2(Bucket="VoiceBucket").get("KeyCount", 0) == 0
    assert boto3.client("transcribe").list_transcription_jobs()["TranscriptionJobSummaries"] == []


@pytest.mark.skipif(not (FIXTURES / "add_milk.ogg").exists(), reason="voice fixtures not made")
def test_the_offline_recognizer_hears_a_real_ogg_opus_note_end_to_end(stack: Stack) -> None:
    # Given the default local setting (PocketSphinx) and a note spoken by eSpeak NG
    user = stack.new_user()
    data = (FIXTURES / "add_milk.ogg").read_bytes()
    stack.anthropic.script(answer("Okay."))
    send_note(stack, user, data, duration=3)
    # Then some of its words are recognized (roughly), shown before the answer with the footnote after it
    (item,) = user_items(stack, user)
    heard = item["content"].lower()
    assert {"add", "milk", "list", "buy"} & set(heard.split()), heard
    (reply,) = stack.replies(user)
    assert reply.startswith("🎙 I heard: “") and "Okay." in reply and "VOICE_TRANSCRIBER=openai" in reply
