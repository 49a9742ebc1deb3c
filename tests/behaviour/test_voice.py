"""Voice notes on the in-memory stack (support.memory_stack): a note is heard (through the core's client of an
OpenAI-compatible speech-to-text API, answered in process by the fake server's own code), answered like
typed words, and, after /voice on, answered aloud too (eSpeak NG); every failure is one clear reply and the
chat goes on. The emulated stack keeps the wiring (a note heard through the fake server over HTTP with its
key from SSM, stored in DynamoDB), the key kept out of every log and table, a transcriber too slow to
answer, LoadContext crashing after it transcribed, a sendVoice retried by the state machine, Amazon
Transcribe and Polly on moto, and PocketSphinx hearing a real note (tests/integration/test_voice.py)."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
import soundfile as sf
from support.memory_stack import MemoryStack
from support.ogg import lengthened

from stepwise.states.voice_turn import NOTICE_CHAINED, NOTICE_REJECTED, NOTICE_SILENT, NOTICE_TRANSIENT
from stepwise_local import updates
from stepwise_local.anthropic_server import text as answer

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "voice"
# Made-up Ogg pages: the fake speech-to-text server checks the signature, not the sound.
NOTE = b"OggS\x00\x02" + bytes(range(200)) * 20
KEY = "sk-test-voice-key-0123456789abcdef"
OPENAI = {
    "VOICE_TRANSCRIBER": "openai",
    "VOICE_TRANSCRIPTION_URL": "https://speech.example/v1",  # answered in process by stack.speech
    "VOICE_TRANSCRIPTION_KEY": KEY,
    "VOICE_TRANSCRIPTION_MODEL": "whisper-large-v3-turbo",
}


@pytest.fixture
def stack() -> MemoryStack:
    """A stack with VOICE_TRANSCRIBER=openai, heard by the fake speech-to-text server (`stack.speech`)."""
    return MemoryStack(env=OPENAI)


def send_note(
    stack: MemoryStack,
    user: int,
    data: bytes = NOTE,
    *,
    caption: str | None = None,
    duration: int = 4,
    **extra: Any,
) -> dict[str, Any]:
    """Put the note on the fake Telegram, post its update, run its turn; returns the execution."""
    file_id = stack.telegram.add_file(data, f"voice/note_{user}_{len(stack.telegram.calls())}.oga")
    update = updates.voice_message(
        user, file_id=file_id, duration=duration, file_size=len(data), caption=caption, **extra
    )
    return stack.deliver(update)


def user_items(stack: MemoryStack, user: int) -> list[dict[str, Any]]:
    return [item for item in stack.stored(user) if item["role"] == "user"]


def voice_notes_counted(stack: MemoryStack, user: int) -> list[int]:
    """The user's transcribed notes counted per day (the usage table's day items that have any)."""
    days = stack.usage.days(user, "day#", "day#~")
    return [counted.voice_notes for _, counted in sorted(days.items()) if counted.voice_notes]


def test_a_voice_note_is_answered_like_the_words_it_says(stack: MemoryStack) -> None:
    user = stack.new_user()
    # Given a note that says "add oat milk to my list", with a caption
    stack.speech.add_transcript(NOTE, "add oat milk to my list")
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
    (request,) = stack.speech.requests
    assert (request["model"], request["authorization"]) == ("whisper-large-v3-turbo", f"Bearer {KEY}")
    # And the history keeps the transcript as the user's words, the note's file id, never its bytes
    (item,) = user_items(stack, user)
    assert item["content"] == "add oat milk to my list"
    assert json.loads(item["heard"])["status"] == "heard"


def test_the_next_turn_knows_what_was_said_in_the_note(stack: MemoryStack) -> None:
    user = stack.new_user()
    stack.speech.add_transcript(NOTE, "what is the capital of portugal")
    stack.anthropic.script(answer("Lisbon."), answer("You asked for the capital of Portugal."))
    send_note(stack, user)
    stack.say(user, "what did I just ask?")
    first = stack.anthropic.requests[-1]["messages"][0]["content"]
    assert [b["text"] for b in first if b["type"] == "text"][-1] == "what is the capital of portugal"
    assert stack.replies(user)[-1] == "You asked for the capital of Portugal."


def test_a_wrong_key_gets_the_notice_and_the_next_note_is_heard(stack: MemoryStack) -> None:
    user = stack.new_user()
    stack.anthropic.script(answer("Heard you."))
    stack.speech.fail_next(401)  # a wrong key
    send_note(stack, user)
    stack.anthropic.script(answer("Heard you."))
    send_note(stack, user)
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
    stack: MemoryStack, fault: dict[str, int], notice: str
) -> None:
    user = stack.new_user()
    models_before = len(stack.anthropic.requests)
    stack.speech.fail_next(**fault)
    execution = send_note(stack, user)
    # One reply, no model call, no failed execution
    assert execution["status"] == "SUCCEEDED"
    assert stack.replies(user) == [notice]
    assert len(stack.anthropic.requests) == models_before
    # And the note is in the history as one that could not be transcribed
    (item,) = user_items(stack, user)
    assert json.loads(item["heard"])["status"] == "failed"
    assert "attachment" in item


def test_a_throttled_transcriber_is_tried_again_and_the_note_answered(stack: MemoryStack) -> None:
    user = stack.new_user()
    stack.speech.add_transcript(NOTE, "hello there")
    stack.speech.fail_next(429, retry_after=1)
    stack.anthropic.script(answer("Hello!"))
    send_note(stack, user)
    assert stack.replies(user) == ["Hello!"]
    assert [r["status"] for r in stack.speech.requests] == [429, 200]
    assert 1.0 in stack.slept, "the client waited what the server asked"


def test_a_silent_note_is_told_so_without_a_model_call(stack: MemoryStack) -> None:
    user = stack.new_user()
    silent = NOTE + b"silence"
    stack.speech.add_transcript(silent, "   ")
    models_before = len(stack.anthropic.requests)
    send_note(stack, user, silent)
    assert stack.replies(user) == [NOTICE_SILENT]
    assert len(stack.anthropic.requests) == models_before


def test_a_note_over_the_limit_is_neither_downloaded_nor_transcribed() -> None:
    stack = MemoryStack(env=OPENAI | {"VOICE_MAX_SECONDS": "60"})
    user = stack.new_user()
    downloads, models = len(stack.telegram.downloads), len(stack.anthropic.requests)
    send_note(stack, user, duration=61)
    assert stack.replies(user) == [
        "That voice note is 1 min 1 s long; I transcribe up to 1 min. "
        "Could you send a shorter one, or type it?"
    ]
    assert len(stack.telegram.downloads) == downloads
    assert stack.speech.requests == [] and len(stack.anthropic.requests) == models


def test_a_note_that_claims_3_s_but_lasts_10_minutes_is_refused_before_any_transcription(
    stack: MemoryStack,
) -> None:
    # Given a real Ogg Opus note ten minutes long whose update says it lasts 3 s (the client's word)
    ten_minutes = lengthened((FIXTURES / "silence.ogg").read_bytes(), 600)
    assert sf.info(io.BytesIO(ten_minutes)).duration == pytest.approx(600, abs=2)
    stack.speech.add_transcript(ten_minutes, "ten minutes of words")
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
    assert stack.speech.requests == [] and len(stack.anthropic.requests) == models
    (item,) = user_items(stack, user)
    assert json.loads(item["heard"])["problem"] == "too_long"
    assert voice_notes_counted(stack, user) == []


def test_a_short_note_with_ten_minutes_chained_after_it_is_refused_before_any_transcription(
    stack: MemoryStack,
) -> None:
    # Given a real 1.9 s note with a second Ogg stream of ten minutes chained after it (its update says 2 s)
    chained = (FIXTURES / "hello.ogg").read_bytes() + lengthened((FIXTURES / "silence.ogg").read_bytes(), 600)
    stack.speech.add_transcript(chained, "hello, how are you today, and ten minutes more")
    user = stack.new_user()
    models = len(stack.anthropic.requests)
    # When it arrives
    execution = send_note(stack, user, chained, duration=2)
    # Then it is refused with one clear reply: no transcription request, no model call, nothing counted
    assert execution["status"] == "SUCCEEDED"
    assert stack.replies(user) == [NOTICE_CHAINED]
    assert stack.speech.requests == [] and len(stack.anthropic.requests) == models
    (item,) = user_items(stack, user)
    assert json.loads(item["heard"])["problem"] == "chained"
    assert voice_notes_counted(stack, user) == []


def test_a_heard_note_is_counted_once(stack: MemoryStack) -> None:
    user = stack.new_user()
    stack.speech.add_transcript(NOTE, "remind me about the dentist")
    stack.anthropic.script(answer("Noted."))
    send_note(stack, user)
    assert voice_notes_counted(stack, user) == [1]


def test_a_voice_note_in_a_burst_is_answered_in_order_with_the_typed_messages(stack: MemoryStack) -> None:
    user = stack.new_user()
    stack.speech.add_transcript(NOTE, "and also buy bread")
    stack.anthropic.script(answer("One."), answer("Two."))
    stack.say(user, "buy milk")
    send_note(stack, user)
    assert stack.replies(user) == ["One.", "Two."]
    assert [i["content"] for i in user_items(stack, user)] == ["buy milk", "and also buy bread"]


def test_spoken_answers_after_voice_on_come_as_a_voice_message_after_the_text(stack: MemoryStack) -> None:
    user = stack.new_user()
    stack.say(user, "/voice on")
    stack.speech.add_transcript(NOTE, "how long is a marathon")
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
