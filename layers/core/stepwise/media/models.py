"""An attachment as it travels with a message: Telegram's file id and what the update said about the file.

The bytes never travel: DynamoDB items (400 KB) and Step Functions payloads (256 KB) could not hold them.
CallModel fetches them from the Bot API when it builds a request.
"""

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

# photo and document may reach the model; voice, audio and video_note are transcribed (their words reach it);
# the other kinds are answered with a notice.
AttachmentKind = Literal["photo", "document", "voice", "audio", "video", "video_note", "animation", "sticker"]
AUDIO_KINDS = frozenset({"voice", "audio", "video_note"})
HeardStatus = Literal["heard", "silent", "failed"]


class Attachment(BaseModel):
    """One file of a message (a photo: the size chosen for the model)."""

    model_config = ConfigDict(defer_build=True, frozen=True)

    kind: AttachmentKind
    file_id: str = Field(min_length=1)
    size: int | None = Field(default=None, ge=0)  # bytes, as the update reported them
    mime_type: str | None = None
    file_name: str | None = None
    seconds: int | None = Field(default=None, ge=0)  # a voice note's or audio's length, per Telegram
    refusal: str | None = None  # why the model does not get it (too large, a voice note...), told the user

    @property
    def taken(self) -> bool:
        """True when the model gets the file."""
        return self.refusal is None

    @property
    def is_audio(self) -> bool:
        """True for a voice note, an audio file or a round video message: its words are transcribed."""
        return self.kind in AUDIO_KINDS


class Heard(BaseModel):
    """What a voice note (or audio file, or video message) said, as its turn transcribed it: kept once it
    exists, so a retried state never transcribes or pays twice. The history's message holds `text` as its
    content; `caption` is what the user typed beside the note."""

    model_config = ConfigDict(defer_build=True, frozen=True)

    status: HeardStatus
    text: str = ""
    caption: str = ""
    seconds: float = Field(default=0.0, ge=0)
    transcriber: str = ""
    language: str | None = None
    # why it failed: `transient`, `rejected`, or refused before transcription: `too_long` (by its audio),
    # `too_large` (more bytes than VOICE_MAX_SECONDS of audio should take), `chained` (several Ogg streams)
    problem: str | None = None
