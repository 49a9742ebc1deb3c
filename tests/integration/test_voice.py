"""Voice notes through the real state machine: a note is heard (an OpenAI-compatible speech-to-text server on
127.0.0.1, Amazon Transcribe on moto, or PocketSphinx offline), answered like typed words, and, after
/voice on, answered aloud too; every failure is one clear reply and the chat goes on."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
import soundfile as sf
from support.ogg import lengthened
from support.stack import Stack

from stepwise.states.voice_turn import NOTICE_CHAINED, NOTICE_REJECTED, NOTICE_SILENT, NOTICE_TRANSIENT
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


def test_the_next_turn_knows_what_was_said_in_the_note(openai_stack: Stack, speech: FakeSpeechToText) -> None:
    stack = openai_stack
    user = stack.new_user()
    speech.add_transcript(NOTE, "what is the capital of portugal")
    stack.anthropic.script(answer("Lisbon."), answer("You asked for the capital of Portugal."))
    send_note(stack, user)
    stack.say(user, "what did I just ask?")
    first = stack.anthropic.requests[-1]["messages"][0]["content"]
    assert [b["text"] for b in first if b["type"] == "text"][-1] == "what is the capital of portugal"
    assert stack.replies(user)[-1] == "You asked for the capital of Portugal."


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


@pytest.mark.parametrize(
    ("fault", "notice"),
    [
        ({"status": 500, "times": 3}, NOTICE_TRANSIENT),
        ({"status": 429, "times": 3}, NOTICE_TRANSIENT),
        ({"status": 400}, NOTICE_REJECTED),
    ],
    ids=["server-error", "throttled", "refused"],
)
def test_a_transcriber_that_fails_gets_one_clear_reply_and_the_note_is_kept(
    openai_stack: Stack, speech: FakeSpeechToText, fault: dict[str, int], notice: str
) -> None:
    stack = openai_stack
    user = stack.new_user()
    models_before = len(stack.anthropic.requests)
    speech.fail_next(**fault)
    execution = send_note(stack, user)
    # One reply, no model call, no failed execution
    assert execution["status"] == "SUCCEEDED"
    assert stack.replies(user) == [notice]
    assert len(stack.anthropic.requests) == models_before
    # And the note is in the history as one that could not be transcribed
    (item,) = user_items(stack, user)
    assert json.loads(item["heard"])["status"] == "failed"
    assert "attachment" in item


def test_a_throttled_transcriber_is_tried_again_and_the_note_answered(
    openai_stack: Stack, speech: FakeSpeechToText
) -> None:
    stack = openai_stack
    user = stack.new_user()
    speech.add_transcript(NOTE, "hello there")
    speech.fail_next(429, retry_after=1)
    stack.anthropic.script(answer("Hello!"))
    send_note(stack, user)
    assert stack.replies(user) == ["Hello!"]
    assert [r["status"] for r in speech.requests] == [429, 200]


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


def test_a_silent_note_is_told_so_without_a_model_call(openai_stack: Stack, speech: FakeSpeechToText) -> None:
    stack = openai_stack
    user = stack.new_user()
    silent = NOTE + b"silence"
    speech.add_transcript(silent, "   ")
    models_before = len(stack.anthropic.requests)
    send_note(stack, user, silent)
    assert stack.replies(user) == [NOTICE_SILENT]
    assert len(stack.anthropic.requests) == models_before


def test_a_note_over_the_limit_is_neither_downloaded_nor_transcribed(
    openai_stack: Stack, speech: FakeSpeechToText
) -> None:
    stack = openai_stack
    stack.emulation.config.env["VOICE_MAX_SECONDS"] = "60"
    user = stack.new_user()
    downloads, models = len(stack.telegram.downloads), len(stack.anthropic.requests)
    send_note(stack, user, duration=61)
    assert stack.replies(user) == [
        "That voice note is 1 min 1 s long; I transcribe up to 1 min. "
        "Could you send a shorter one, or type it?"
    ]
    assert len(stack.telegram.downloads) == downloads
    assert speech.requests == [] and len(stack.anthropic.requests) == models


def test_a_note_that_claims_3_s_but_lasts_10_minutes_is_refused_before_any_transcription(
    openai_stack: Stack, speech: FakeSpeechToText
) -> None:
    # Given a real Ogg Opus note ten minutes long whose update says it lasts 3 s (the client's word)
    stack = openai_stack
    ten_minutes = lengthened((FIXTURES / "silence.ogg").read_bytes(), 600)
    assert sf.info(io.BytesIO(ten_minutes)).duration == pytest.approx(600, abs=2)
    speech.add_transcript(ten_minutes, "ten minutes of words")
    user = stack.new_user()
    models = len(stack.anthropic.requests)
    # When it arrives
    execution = send_note(stack, user, ten_minutes, duration=3)
    # Then it was downloaded, measured and refused: no transcription request, no model call, nothing counted
    assert execution["status"] == "SUCCEEDED"
    assert stack.replies(user) == [
        "That voice note is 10 min 1 s long; I transcribe up to 5 min. "
        "Could you send a shorter one, or type it?"
    ]
    assert speech.requests == [] and len(stack.anthropic.requests) == models
    (item,) = user_items(stack, user)
    assert json.loads(item["heard"])["problem"] == "too_long"
    usage = stack.emulation.table("UsageTable").scan()["Items"]
    assert not [i for i in usage if i["user_id"] == user and int(i.get("voice_notes", 0))]


def test_a_short_note_with_ten_minutes_chained_after_it_is_refused_before_any_transcription(
    openai_stack: Stack, speech: FakeSpeechToText
) -> None:
    # Given a real 1.9 s note with a second Ogg stream of ten minutes chained after it (its update says 2 s)
    stack = openai_stack
    chained = (FIXTURES / "hello.ogg").read_bytes() + lengthened((FIXTURES / "silence.ogg").read_bytes(), 600)
    speech.add_transcript(chained, "hello, how are you today, and ten minutes more")
    user = stack.new_user()
    models = len(stack.anthropic.requests)
    # When it arrives
    execution = send_note(stack, user, chained, duration=2)
    # Then it is refused with one clear reply: no transcription request, no model call, nothing counted
    assert execution["status"] == "SUCCEEDED"
    assert stack.replies(user) == [NOTICE_CHAINED]
    assert speech.requests == [] and len(stack.anthropic.requests) == models
    (item,) = user_items(stack, user)
    assert json.loads(item["heard"])["problem"] == "chained"
    usage = stack.emulation.table("UsageTable").scan()["Items"]
    assert not [i for i in usage if i["user_id"] == user and int(i.get("voice_notes", 0))]


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


def test_a_voice_note_in_a_burst_is_answered_in_order_with_the_typed_messages(
    openai_stack: Stack, speech: FakeSpeechToText
) -> None:
    stack = openai_stack
    user = stack.new_user()
    speech.add_transcript(NOTE, "and also buy bread")
    stack.anthropic.script(answer("One."), answer("Two."))
    stack.say(user, "buy milk")
    send_note(stack, user)
    assert stack.replies(user) == ["One.", "Two."]
    assert [i["content"] for i in user_items(stack, user)] == ["buy milk", "and also buy bread"]


def test_spoken_answers_after_voice_on_come_as_a_voice_message_after_the_text(
    openai_stack: Stack, speech: FakeSpeechToText
) -> None:
    stack = openai_stack
    user = stack.new_user()
    stack.say(user, "/voice on")
    speech.add_transcript(NOTE, "how long is a marathon")
    stack.anthropic.script(answer("A marathon is **42.195 km**. See [the rules](https://example.com/rules)."))
    send_note(stack, user)
    assert stack.replies(user)[-1] == "A marathon is 42.195 km. See the rules."
    (voice,) = stack.telegram.voices(user)
    audio = stack.telegram.voice_bytes(voice)
    assert audio.startswith(b"OggS") and b"OpusHead" in audio[:200]
    # A typed message is answered in text only, even with /voice on
    stack.anthropic.script(answer("Sure."))
    stack.say(user, "thanks")
    assert len(stack.telegram.voices(user)) == 1
    # And /usage counts the note and the characters spoken
    stack.say(user, "/usage")
    assert "1 voice note (4 s transcribed)" in stack.replies(user)[-1]
    assert "characters spoken" in stack.replies(user)[-1]


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
