"""LoadContext's part for voice notes (and audio files and round video messages): download each note the turn
takes, transcribe it once, count what it cost, and tell the user when it could not be heard.

A transcript is kept in the turn's records as soon as it exists (`TurnStore.put_heard`), so a retried
LoadContext reads it instead of transcribing (and paying) again; Amazon Transcribe's job is also named
after the message, so a crash in the middle finds the same job. A transcriber that fails after its own
retries, a note that cannot be read as audio, and a silent note are not errors of the turn: the note is
stored as "a voice note that could not be transcribed" (or heard as silent), the user gets one clear
sentence, and the chat goes on. Only a transient Telegram failure while downloading fails the state,
whose retry downloads again.

Imported only when a turn takes a note: a plain turn loads none of this.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from stepwise.media.intake import clock_length, max_audio_bytes
from stepwise.media.models import Heard
from stepwise.telegram.errors import TelegramError, TelegramTransientError
from stepwise.usage.budget import is_over_budget
from stepwise.usage.meter import count_totals, transcription_usage
from stepwise.voice.duration import ChainedOgg, audio_seconds
from stepwise.voice.models import TranscriptionRejected, TranscriptionTransient, VoiceError

if TYPE_CHECKING:
    from collections.abc import Sequence

    from stepwise.inbox.models import QueuedMessage
    from stepwise.media.voice import VoiceSetup
    from stepwise.services import TurnServices
    from stepwise.turn.ref import TurnRef

logger = logging.getLogger(__name__)

TELEGRAM_MAX_DOWNLOAD_BYTES = 20_000_000  # bots may download files up to 20 MB
NOTICE_SILENT = "I couldn't hear anything in that voice note. Could you record it again, or type it?"
NOTICE_TRANSIENT = (
    "I couldn't transcribe that voice note just now (the transcription service didn't answer in time). "
    "It's saved; could you send it again in a minute, or type it?"
)
NOTICE_TOO_LONG = (
    "That voice note is {length} long; I transcribe up to {limit}. Could you send a shorter one, or type it?"
)
LENGTH_GRACE_SECONDS = 1.0  # Telegram rounds a note's length to whole seconds
NOTICE_TOO_LARGE = (
    "That voice note is larger than {limit} of audio should be; I transcribe up to {limit}. "
    "Could you send a shorter one, or type it?"
)
NOTICE_CHAINED = (
    "That voice note is several recordings joined into one file, which I can't measure or transcribe "
    "reliably. Could you send it as a single recording, or type it?"
)
NOTICE_REJECTED = (
    "I couldn't make out that voice note: it couldn't be read as audio. "
    "Could you record it again, or type it?"
)
ROUGH_FOOTNOTE = (
    "(Heard offline by PocketSphinx, which is rough. For better transcripts set VOICE_TRANSCRIBER=openai: "
    "see docs/voice.md.)"
)


def hear_notes(turn: TurnRef, batch: Sequence[QueuedMessage], services: TurnServices) -> dict[str, Heard]:
    """What each note of the batch said, by message id (transcribed now, or read back from an earlier
    attempt of this state)."""
    voice = services.models.voice
    heard: dict[str, Heard] = {}
    over_budget: bool | None = None
    for waiting in batch:
        attachment = waiting.attachment
        if attachment is None or not attachment.is_audio or not attachment.taken:
            continue
        kept = services.stores.turns.heard(turn.turn_id, waiting.id)
        if kept is not None:
            heard[waiting.id] = kept
            continue
        if voice is None:  # a note admitted before voice was turned off
            heard[waiting.id] = Heard(status="failed", caption=waiting.text, problem="rejected")
            continue
        if over_budget is None:
            over_budget = _over_budget(waiting.user_id, services)
        if over_budget:  # the budget refusal answers the turn; the note is kept, not transcribed
            note = Heard(
                status="failed", caption=waiting.text, problem="budget", transcriber=voice.transcriber_name
            )
        else:
            note = _transcribe(turn, waiting, voice, services)
        services.stores.turns.put_heard(turn.turn_id, waiting.id, note)
        heard[waiting.id] = note
    return heard


def _over_budget(user_id: int, services: TurnServices) -> bool:
    if services.stores.usage is None:
        return False
    return (
        is_over_budget(
            services.stores.usage, user_id, services.clock(), services.settings.limits.daily_token_budget
        )
        is not None
    )


def _transcribe(turn: TurnRef, waiting: QueuedMessage, voice: VoiceSetup, services: TurnServices) -> Heard:
    attachment = waiting.attachment
    assert attachment is not None
    ids = {"message_id": waiting.id, "kind": attachment.kind, "seconds": attachment.seconds}
    if services.outbound.files is None:
        logger.warning("no file source configured: the note cannot be fetched", extra=ids)
        return Heard(status="failed", caption=waiting.text, problem="rejected")
    try:
        audio = services.outbound.files().download(attachment.file_id, TELEGRAM_MAX_DOWNLOAD_BYTES)
    except TelegramTransientError:
        raise  # the state's retry downloads again
    except TelegramError as error:
        logger.warning("voice note not fetched from Telegram", extra={**ids, "error": str(error)})
        return Heard(status="failed", caption=waiting.text, problem="rejected")
    cap = max_audio_bytes(attachment.kind, voice.max_seconds)
    if len(audio) > cap:  # bounds what a length that cannot be measured (MP3, MP4) may cost
        logger.warning(
            "voice note larger than VOICE_MAX_SECONDS of audio should be: not transcribed",
            extra={**ids, "bytes": len(audio), "max_bytes": cap},
        )
        return _refused(waiting, voice, "too_large")
    try:
        measured = audio_seconds(audio)
    except ChainedOgg as error:
        logger.warning(
            "voice note of more than one Ogg stream: not transcribed", extra={**ids, "error": str(error)}
        )
        return _refused(waiting, voice, "chained")
    if measured is not None and measured > voice.max_seconds + LENGTH_GRACE_SECONDS:
        # The update's length is the client's word; the audio's own is what a transcriber would bill.
        logger.warning(
            "voice note longer than VOICE_MAX_SECONDS by its audio: not transcribed",
            extra={**ids, "measured_seconds": round(measured, 2), "max_seconds": voice.max_seconds},
        )
        return _refused(waiting, voice, "too_long", seconds=measured)
    if measured is None:
        logger.info("voice note's length not measured from its audio (format not read)", extra=ids)
    mime_type = attachment.mime_type or ("video/mp4" if attachment.kind == "video_note" else None)
    try:
        transcript = voice.transcriber().transcribe(
            audio, job_id=waiting.id, mime_type=mime_type, file_name=attachment.file_name
        )
    except TranscriptionRejected as error:
        logger.warning("voice note refused by the transcriber", extra={**ids, "error": str(error)})
        return Heard(
            status="failed", caption=waiting.text, problem="rejected", transcriber=voice.transcriber_name
        )
    except (TranscriptionTransient, VoiceError) as error:
        logger.warning("voice note not transcribed", extra={**ids, "error": str(error)})
        return Heard(
            status="failed", caption=waiting.text, problem="transient", transcriber=voice.transcriber_name
        )
    except Exception as error:  # a transcriber's bug must not lose the note or fail the turn
        logger.exception(
            "the transcriber failed unexpectedly", extra={**ids, "error_type": type(error).__name__}
        )
        return Heard(
            status="failed", caption=waiting.text, problem="transient", transcriber=voice.transcriber_name
        )
    seconds = transcript.seconds or float(attachment.seconds or 0)
    text = " ".join(transcript.text.split())
    _count(waiting, voice, seconds, services)
    logger.info(
        "voice note transcribed",
        extra={**ids, "words": len(text.split()), "transcriber": voice.transcriber_name},
    )
    return Heard(
        status="heard" if text else "silent",
        text=text,
        caption=waiting.text,
        seconds=round(seconds, 2),
        transcriber=transcript.transcriber,
        language=transcript.language,
    )


def _refused(waiting: QueuedMessage, voice: VoiceSetup, problem: str, seconds: float = 0.0) -> Heard:
    """A note refused before any transcription, for `problem` (its notice is `notice_for`'s)."""
    return Heard(
        status="failed",
        caption=waiting.text,
        problem=problem,
        seconds=round(seconds, 2),
        transcriber=voice.transcriber_name,
    )


def _count(waiting: QueuedMessage, voice: VoiceSetup, seconds: float, services: TurnServices) -> None:
    """Add the transcription to the user's day, once per note (its message id is the key)."""
    if services.stores.usage is None:
        return
    used = transcription_usage(
        services.settings.model.name, voice.transcriber_name, seconds, voice.openai_usd_per_minute
    )
    count_totals(services.stores.usage, waiting.user_id, f"voice#{waiting.id}", used, services.clock())


def notice_for(heard: Heard, max_seconds: int = 300) -> str | None:
    """The sentence the user gets about a note that could not be heard (None: it was, or the budget
    refusal says why); `max_seconds` is VOICE_MAX_SECONDS."""
    if heard.status == "silent":
        return NOTICE_SILENT
    if heard.status == "failed" and heard.problem == "too_long":
        length = clock_length(round(heard.seconds))
        return NOTICE_TOO_LONG.format(length=length, limit=clock_length(max_seconds))
    if heard.status == "failed" and heard.problem == "too_large":
        return NOTICE_TOO_LARGE.format(limit=clock_length(max_seconds))
    if heard.status == "failed" and heard.problem == "chained":
        return NOTICE_CHAINED
    if heard.status == "failed" and heard.problem == "transient":
        return NOTICE_TRANSIENT
    if heard.status == "failed" and heard.problem == "rejected":
        return NOTICE_REJECTED
    return None


def rough_lines(heard: dict[str, Heard]) -> tuple[list[str], list[str]]:
    """For the offline recognizer's transcripts: a line before the reply showing what was heard, and the
    footnote after it saying that it is rough and how to get better."""
    rough = [note for note in heard.values() if note.status == "heard" and note.transcriber == "local"]
    if not rough:
        return [], []
    return [f"🎙 I heard: “{note.text}”" for note in rough], [ROUGH_FOOTNOTE]
