"""The voice turn on in-memory ports: LoadContext hears a note once, counts it, tells the user what could not
be heard; FinishTurn speaks the answer once after the text; /voice; voice in /usage and the daily budget."""

from __future__ import annotations

from dataclasses import replace
from decimal import Decimal
from pathlib import Path

import pytest
from support.ogg import lengthened
from support.turn_fakes import ScriptedModel, drive_turn, text_response, turn_meta, turn_settings

from stepwise.commands.voice import voice as voice_command
from stepwise.history.models import StoredMessage
from stepwise.inbox.models import QueuedMessage
from stepwise.media.models import Attachment
from stepwise.media.voice import VoiceSetup
from stepwise.services import TurnServices
from stepwise.states.contracts.finish_turn import FinishTurnInput
from stepwise.states.contracts.load_context import LoadContextInput
from stepwise.states.finish_turn import finish_turn
from stepwise.states.load_context import load_context
from stepwise.states.voice_reply import answer_text
from stepwise.states.voice_turn import (
    NOTICE_CHAINED,
    NOTICE_REJECTED,
    NOTICE_SILENT,
    NOTICE_TRANSIENT,
)
from stepwise.telegram.conversation import Conversation
from stepwise.telegram.errors import TelegramBadRequest, TelegramTransientError
from stepwise.turn.ref import TurnRef
from stepwise.turn.start import TurnStart
from stepwise.usage.models import UsageTotals, day_key
from stepwise.usage.prices import cost_budget_tokens, price_for, speech_nano_usd, transcription_nano_usd
from stepwise.usage.report import usage_report
from stepwise.voice.models import (
    SpeechError,
    SpokenAudio,
    Transcript,
    TranscriptionRejected,
    TranscriptionTransient,
)
from stepwise_local.in_memory.files import InMemoryFiles
from stepwise_local.in_memory.telegram import InMemoryTelegram
from stepwise_local.in_memory.usage import InMemoryUsageStore

CHAT = 7
NOTE = b"OggS-a-voice-note"
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "voice"


class FakeTranscriber:
    """Answers with `text`, or raises the errors queued in `failures`; counts its calls."""

    name = "openai"

    def __init__(self, text: str = "add oat milk") -> None:
        self.text = text
        self.failures: list[Exception] = []
        self.calls: list[str] = []

    def transcribe(
        self, audio: bytes, *, job_id: str, mime_type: str | None, file_name: str | None
    ) -> Transcript:
        self.calls.append(job_id)
        if self.failures:
            raise self.failures.pop(0)
        return Transcript(text=self.text, seconds=0.0, transcriber=self.name)


class FakeSpeaker:
    def __init__(self) -> None:
        self.spoken: list[str] = []
        self.fail: Exception | None = None

    def synthesize(self, text: str) -> SpokenAudio:
        if self.fail is not None:
            raise self.fail
        self.spoken.append(text)
        return SpokenAudio(ogg_opus=b"OggS" + text.encode(), seconds=2.0, characters=len(text))


@pytest.fixture
def files() -> InMemoryFiles:
    return InMemoryFiles()


@pytest.fixture
def transcriber() -> FakeTranscriber:
    return FakeTranscriber()


@pytest.fixture
def speaker() -> FakeSpeaker:
    return FakeSpeaker()


@pytest.fixture
def voice_services(
    services: TurnServices, files: InMemoryFiles, transcriber: FakeTranscriber, speaker: FakeSpeaker
) -> TurnServices:
    services.outbound.files = lambda: files
    services.stores.usage = InMemoryUsageStore()
    services.models.voice = VoiceSetup(
        transcriber_name="openai",
        transcriber=lambda: transcriber,
        speaker=lambda: speaker,
        max_reply_chars=200,
    )
    return services


def queue_note(
    services: TurnServices,
    files: InMemoryFiles,
    *,
    update_id: int = 1,
    caption: str = "",
    seconds: int = 15,
    data: bytes = NOTE,
    size: int | None = len(NOTE),
) -> TurnStart:
    """A voice note waiting in the chat's inbox, its bytes on the fake Telegram (`size`: the update's)."""
    file_id = files.add(f"voice-{update_id}", data)
    services.outbound.sequencer().inbox.enqueue(
        QueuedMessage(
            chat_id=CHAT,
            update_id=update_id,
            user_id=CHAT,
            id=f"msg-{update_id}",
            text=caption,
            attachment=Attachment(kind="voice", file_id=file_id, size=size, seconds=seconds),
            received_at="2026-11-22T09:00:00.000Z",
        ),
        expires_at=0,
    )
    return TurnStart(
        turn=TurnRef(turn_id=f"turn-{update_id}", chat_id=CHAT, user_id=CHAT, update_id=update_id)
    )


def test_a_note_is_stored_as_its_words_and_answered_by_the_model(
    voice_services: TurnServices, files: InMemoryFiles, model: ScriptedModel, telegram: InMemoryTelegram
) -> None:
    # Given a note with a caption
    start = queue_note(voice_services, files, caption="for saturday")
    model.responses.append(text_response("Added."))
    # When its turn runs
    drive_turn(voice_services, start)
    # Then the history holds the words, the caption beside them, and the model read both
    (stored,) = voice_services.stores.messages.recent(Conversation(CHAT), 5)[:1]
    assert stored.content == "add oat milk" and stored.heard is not None
    assert (stored.heard.status, stored.heard.caption, stored.heard.seconds) == (
        "heard",
        "for saturday",
        15.0,
    )
    texts = [block["text"] for block in model.requests[-1].messages[-1]["content"] if block["type"] == "text"]
    assert "[voice note, transcribed automatically; its caption: for saturday]" in texts
    assert telegram.texts(CHAT) == ["Added."]


def test_a_retried_load_context_reads_the_transcript_instead_of_transcribing_again(
    voice_services: TurnServices, files: InMemoryFiles, transcriber: FakeTranscriber
) -> None:
    start = queue_note(voice_services, files)
    first = load_context(LoadContextInput(turn=start.turn), voice_services)
    second = load_context(LoadContextInput(turn=start.turn), voice_services)
    assert first.route == second.route == "model"
    assert transcriber.calls == ["msg-1"]
    assert voice_services.stores.usage is not None
    assert voice_services.stores.usage.totals(CHAT, day_key(voice_services.clock())).voice_notes == 1


@pytest.mark.parametrize(
    ("failure", "notice"),
    [
        (TranscriptionTransient("HTTP 503"), NOTICE_TRANSIENT),
        (TranscriptionRejected("HTTP 400: not audio"), NOTICE_REJECTED),
        (RuntimeError("a bug in the transcriber"), NOTICE_TRANSIENT),
    ],
    ids=["transient", "rejected", "unexpected"],
)
def test_a_note_that_cannot_be_transcribed_is_one_notice_and_no_model_call(
    voice_services: TurnServices,
    files: InMemoryFiles,
    transcriber: FakeTranscriber,
    model: ScriptedModel,
    telegram: InMemoryTelegram,
    failure: Exception,
    notice: str,
) -> None:
    transcriber.failures.append(failure)
    drive_turn(voice_services, queue_note(voice_services, files))
    assert telegram.texts(CHAT) == [notice]
    assert model.requests == []
    stored = uncounted_note(voice_services)
    assert stored.heard is not None and stored.heard.status == "failed" and stored.content == ""


def uncounted_note(services: TurnServices) -> StoredMessage:
    """The chat's one stored user message, after checking that no voice note was counted today."""
    (stored,) = [m for m in services.stores.messages.recent(Conversation(CHAT), 5) if m.role == "user"]
    assert services.stores.usage is not None
    assert services.stores.usage.totals(CHAT, day_key(services.clock())).voice_notes == 0
    return stored


def test_a_short_note_chained_to_ten_minutes_is_refused_before_any_transcription(
    voice_services: TurnServices,
    files: InMemoryFiles,
    transcriber: FakeTranscriber,
    model: ScriptedModel,
    telegram: InMemoryTelegram,
) -> None:
    # Given a real 1.9 s note with ten minutes of audio chained after it, said to last 2 s
    chained = (FIXTURES / "hello.ogg").read_bytes() + lengthened((FIXTURES / "silence.ogg").read_bytes(), 600)
    start = queue_note(voice_services, files, data=chained, size=len(chained), seconds=2)
    # When its turn runs
    drive_turn(voice_services, start)
    # Then it is refused with one clear reply: no transcription, no model call, nothing counted
    assert telegram.texts(CHAT) == [NOTICE_CHAINED]
    assert transcriber.calls == [] and model.requests == []
    stored = uncounted_note(voice_services)
    assert stored.heard is not None and (stored.heard.status, stored.heard.problem) == ("failed", "chained")


def test_a_note_larger_than_the_longest_length_could_be_is_refused_unmeasured(
    voice_services: TurnServices,
    files: InMemoryFiles,
    transcriber: FakeTranscriber,
    telegram: InMemoryTelegram,
) -> None:
    # Given a 10 s limit (at most 400,000 bytes at 320 kb/s) and an MP3 of 400,001 bytes whose update gave no
    # size (so the webhook could not refuse it): a format whose length is not read from its bytes
    assert voice_services.models.voice is not None
    voice_services.models.voice = replace(voice_services.models.voice, max_seconds=10)
    mp3 = b"ID3\x04\x00" + bytes(400_001 - 5)
    drive_turn(voice_services, queue_note(voice_services, files, data=mp3, size=None, seconds=3))
    assert telegram.texts(CHAT) == [
        "That voice note is larger than 10 s of audio should be; I transcribe up to 10 s. "
        "Could you send a shorter one, or type it?"
    ]
    assert transcriber.calls == []


def test_a_note_at_that_size_is_transcribed(
    voice_services: TurnServices, files: InMemoryFiles, transcriber: FakeTranscriber, model: ScriptedModel
) -> None:
    assert voice_services.models.voice is not None
    voice_services.models.voice = replace(voice_services.models.voice, max_seconds=10)
    model.responses.append(text_response("Added."))
    mp3 = b"ID3\x04\x00" + bytes(400_000 - 5)
    drive_turn(voice_services, queue_note(voice_services, files, data=mp3, size=None, seconds=3))
    assert transcriber.calls == ["msg-1"]


def test_a_silent_note_is_told_so(
    voice_services: TurnServices,
    files: InMemoryFiles,
    transcriber: FakeTranscriber,
    telegram: InMemoryTelegram,
) -> None:
    transcriber.text = "  "
    drive_turn(voice_services, queue_note(voice_services, files))
    assert telegram.texts(CHAT) == [NOTICE_SILENT]


def test_a_transient_telegram_failure_fails_the_state_for_its_retry(
    voice_services: TurnServices, files: InMemoryFiles, transcriber: FakeTranscriber
) -> None:
    files.fail_next(TelegramTransientError("getFile", 502, "Bad Gateway"))
    start = queue_note(voice_services, files)
    with pytest.raises(TelegramTransientError):
        load_context(LoadContextInput(turn=start.turn), voice_services)
    assert transcriber.calls == []
    assert load_context(LoadContextInput(turn=start.turn), voice_services).route == "model"


def test_a_file_telegram_refuses_for_good_is_a_note_that_could_not_be_transcribed(
    voice_services: TurnServices, files: InMemoryFiles, telegram: InMemoryTelegram
) -> None:
    files.fail_next(TelegramBadRequest("getFile", 400, "Bad Request: file is too big"))
    drive_turn(voice_services, queue_note(voice_services, files))
    assert telegram.texts(CHAT) == [NOTICE_REJECTED]


def test_a_note_beside_a_typed_message_gets_its_notice_first_and_the_model_answers_the_rest(
    voice_services: TurnServices,
    files: InMemoryFiles,
    transcriber: FakeTranscriber,
    model: ScriptedModel,
    telegram: InMemoryTelegram,
) -> None:
    voice_services.outbound.sequencer().inbox.enqueue(
        QueuedMessage(
            chat_id=CHAT, update_id=1, user_id=CHAT, id="typed", text="hi", received_at="2026-11-22T09:00:00Z"
        ),
        expires_at=0,
    )
    start = queue_note(voice_services, files, update_id=2)
    transcriber.failures.append(TranscriptionTransient("HTTP 500"))
    model.responses.append(text_response("Hello!"))
    drive_turn(
        voice_services, start.model_copy(update={"turn": start.turn.model_copy(update={"update_id": 1})})
    )
    assert telegram.texts(CHAT) == [f"{NOTICE_TRANSIENT}\n\nHello!"]


def test_over_the_daily_budget_a_note_is_not_transcribed(
    voice_services: TurnServices,
    files: InMemoryFiles,
    transcriber: FakeTranscriber,
    telegram: InMemoryTelegram,
) -> None:
    voice_services.settings = turn_settings(daily_token_budget=100)
    assert voice_services.stores.usage is not None
    voice_services.stores.usage.add(
        CHAT, "earlier", [day_key(voice_services.clock())], UsageTotals(input_tokens=150)
    )
    drive_turn(voice_services, queue_note(voice_services, files))
    assert transcriber.calls == []
    assert "today's usage limit" in telegram.texts(CHAT)[0]


def test_spoken_answers_come_after_the_text_once_and_only_for_voice_notes(
    voice_services: TurnServices,
    files: InMemoryFiles,
    model: ScriptedModel,
    telegram: InMemoryTelegram,
    speaker: FakeSpeaker,
) -> None:
    voice_services.stores.chats.set_voice_replies(Conversation(CHAT), True)
    model.responses.append(
        text_response("Sure, **run** it:\n\n```\nls -la\n```\n\nSee [the docs](https://x.example).")
    )
    start = queue_note(voice_services, files)
    drive_turn(voice_services, start)
    (spoken,) = speaker.spoken
    assert "run" in spoken and "the docs" in spoken
    assert not any(part in spoken for part in ("**", "ls -la", "https", "```"))
    assert [name for name, _ in telegram.calls if name in ("send_message", "send_voice")] == [
        "send_message",
        "send_voice",
    ]
    # A retried FinishTurn sends neither again
    finish_turn(FinishTurnInput(turn=start.turn), voice_services)
    assert len(telegram.voices) == 1 and len(telegram.texts(CHAT)) == 1
    # And the characters are counted with their cost
    assert voice_services.stores.usage is not None
    totals = voice_services.stores.usage.totals(CHAT, day_key(voice_services.clock()))
    assert totals.spoken_characters == len(speaker.spoken[0])


def test_a_speech_failure_keeps_the_text_and_ends_the_turn(
    voice_services: TurnServices,
    files: InMemoryFiles,
    model: ScriptedModel,
    telegram: InMemoryTelegram,
    speaker: FakeSpeaker,
) -> None:
    voice_services.stores.chats.set_voice_replies(Conversation(CHAT), True)
    speaker.fail = SpeechError("Polly: ThrottlingException")
    model.responses.append(text_response("The answer."))
    drive_turn(voice_services, queue_note(voice_services, files))
    assert telegram.texts(CHAT) == ["The answer."] and telegram.voices == []


def test_a_refused_voice_message_is_given_up_and_the_turn_ends(
    voice_services: TurnServices, files: InMemoryFiles, model: ScriptedModel, telegram: InMemoryTelegram
) -> None:
    voice_services.stores.chats.set_voice_replies(Conversation(CHAT), True)
    telegram.fail_next(
        "send_voice", TelegramBadRequest("sendVoice", 400, "Bad Request: VOICE_MESSAGES_FORBIDDEN")
    )
    model.responses.append(text_response("The answer."))
    output = drive_turn(voice_services, queue_note(voice_services, files))
    assert output.saved and telegram.texts(CHAT) == ["The answer."]


def test_the_spoken_text_leaves_out_the_notices_and_footnotes() -> None:
    meta = turn_meta(
        chat_id=1,
        user_id=1,
        notices=["🎙 I heard: “hello”"],
        footnotes=["(rough)"],
    )
    assert answer_text(meta, "🎙 I heard: “hello”\n\nHi there!\n\n(rough)") == "Hi there!"


def test_voice_costs_are_priced_and_count_against_the_budget_as_tokens() -> None:
    # 15 s through Transcribe is billed as 15 s ($0.024 a minute), 5 s as the 15 s minimum
    assert transcription_nano_usd("transcribe", 15, Decimal("0.006")) == 6_000_000
    assert transcription_nano_usd("transcribe", 5, Decimal("0.006")) == 6_000_000
    assert transcription_nano_usd("openai", 60, Decimal("0.006")) == 6_000_000
    assert transcription_nano_usd("local", 60, Decimal("0.006")) == 0
    assert speech_nano_usd("neural", 1_000_000) == 16_000_000_000
    # $0.006 buys 6,000 input tokens of Haiku 4.5 ($1 per million)
    assert cost_budget_tokens(price_for("claude-haiku-4-5"), 6_000_000) == 6000
    totals = UsageTotals(voice_notes=1, voice_seconds=15, voice_tokens=6000, cost_nano_usd=6_000_000)
    assert totals.budget_tokens == 6000 and not totals.is_empty


def test_usage_shows_notes_and_spoken_characters() -> None:
    store = InMemoryUsageStore()
    now = TurnServices.__dataclass_fields__["clock"].default()  # the real clock: any time will do
    used = UsageTotals(voice_notes=2, voice_seconds=75, spoken_characters=412, cost_nano_usd=10_000_000)
    store.add(1, "k", [day_key(now)], used)
    report = usage_report(1, store, now)
    assert "2 voice notes (1 min 15 s transcribed), 412 characters spoken, ≈ $0.0100" in report


@pytest.mark.parametrize(
    ("args", "on", "answer"),
    [
        ("on", True, "Spoken answers are on"),
        ("off", False, "Spoken answers are off"),
        ("loud", False, "Use /voice on or /voice off"),
    ],
)
def test_the_voice_command_turns_spoken_answers_on_and_off(
    voice_services: TurnServices, args: str, on: bool, answer: str
) -> None:
    from stepwise.commands.handlers import CommandRequest

    meta = turn_meta(
        chat_id=CHAT,
        user_id=CHAT,
    )
    text = voice_command(CommandRequest(args=args, meta=meta, services=voice_services, reply_key="k"))
    assert text.startswith(answer)
    chat = voice_services.stores.chats.get(Conversation(CHAT))
    assert (chat.voice_replies if chat else False) is on


def test_the_voice_command_says_when_spoken_answers_are_not_deployed(voice_services: TurnServices) -> None:
    from stepwise.commands.handlers import CommandRequest

    assert voice_services.models.voice is not None
    voice_services.models.voice = replace(voice_services.models.voice, speaker=None)
    meta = turn_meta(
        chat_id=CHAT,
        user_id=CHAT,
    )
    text = voice_command(CommandRequest(args="on", meta=meta, services=voice_services, reply_key="k"))
    assert "VOICE_SPEAKER=off" in text
