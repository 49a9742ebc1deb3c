"""The voice ports and what they return: a transcript of audio, audio spoken from text, and their errors.

Adapters raise `TranscriptionTransient` when trying again later may help (a time-out, 429, a 5xx) after their
own bounded retries, and `TranscriptionRejected` when it cannot (not audio, a bad request, a wrong key). No
error text ever holds a secret or the audio: the user is told a fixed sentence, the log gets the error.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True)
class Transcript:
    """What was heard: `text` ("" when nothing was said), the audio's length in seconds, the language
    when the transcriber says it, and which transcriber made it ("transcribe", "openai", "local")."""

    text: str
    seconds: float
    transcriber: str
    language: str | None = None


@dataclass(frozen=True)
class SpokenAudio:
    """Text spoken as Ogg Opus (what Telegram's sendVoice takes): its bytes, its length in seconds (0 when
    unknown) and how many characters were spoken (what Polly bills)."""

    ogg_opus: bytes
    seconds: float
    characters: int


class VoiceError(Exception):
    """A transcriber or speaker failed; `str(error)` is for the log, never for the user."""


class TranscriptionTransient(VoiceError):
    """The transcriber timed out, throttled (429) or failed on its side (5xx), after its own retries."""


class TranscriptionRejected(VoiceError):
    """The transcriber refused the audio for good (not audio, too long, bad request, a wrong key)."""


class SpeechError(VoiceError):
    """Speech could not be made (Polly refused or failed, the offline engine is missing)."""


class Transcriber(Protocol):
    """Audio in, words out."""

    name: str

    def transcribe(
        self, audio: bytes, *, job_id: str, mime_type: str | None, file_name: str | None
    ) -> Transcript:
        """The words of `audio` (Ogg Opus as Telegram records voice notes, or another format the transcriber
        reads). `job_id` is stable across retries of the same note (a message id: fit for a job name)."""
        ...


class Speaker(Protocol):
    """Text in, Ogg Opus out."""

    def synthesize(self, text: str) -> SpokenAudio:
        """`text` (plain words, already cut to the limit) spoken as Ogg Opus; SpeechError when it cannot."""
        ...
