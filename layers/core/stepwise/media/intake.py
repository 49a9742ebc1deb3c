"""What the webhook keeps of a message's file, and the notice for files the model cannot take."""

from typing import TYPE_CHECKING, NamedTuple

from stepwise.media.formats import megabytes, model_format
from stepwise.media.models import Attachment, AttachmentKind
from stepwise.media.render import LABELS

if TYPE_CHECKING:
    from stepwise.config import Settings
    from stepwise.telegram.models import Message, PhotoSize, TelegramFile

# Anthropic's limit is 5 MB of base64 per image: 3.75 MB of bytes.
DEFAULT_MAX_IMAGE_BYTES = 3_750_000
DEFAULT_MAX_DOCUMENT_BYTES = 10_000_000
TELEGRAM_MAX_DOWNLOAD_BYTES = 20_000_000  # bots download files up to 20 MB
# The most bytes a second of a note may take: a note larger than VOICE_MAX_SECONDS of that is refused.
# 40,000 B/s is 320 kb/s (MP3's highest bitrate, ten times a Telegram voice note's Opus); a round video
# message carries its picture too: 250,000 B/s (2 Mb/s).
GENEROUS_BYTES_PER_SECOND: dict[AttachmentKind, int] = {
    "voice": 40_000,
    "audio": 40_000,
    "video_note": 250_000,
}
# Notes that are transcribed unless VOICE_TRANSCRIBER=off, when they get these notices.
NOT_HEARD: dict[AttachmentKind, str] = {
    "voice": "I can't listen to voice notes here — could you type it instead?",
    "audio": "I can't listen to audio files here — could you tell me in words what you need?",
    "video_note": "I can't listen to video messages here — could you type it instead?",
}
# Files the model cannot take, in the order a message is checked (a GIF comes with a document too).
NOT_YET: dict[AttachmentKind, str] = {
    "video": "I can't watch videos yet — could you describe it in words?",
    "animation": "I can't watch GIFs yet — could you tell me in words?",
    "sticker": "I can't see stickers yet — send me text, a photo or a document.",
}


class MediaLimits(NamedTuple):
    """The largest files the model gets (Telegram's sizes, in bytes)."""

    max_image_bytes: int = DEFAULT_MAX_IMAGE_BYTES
    max_document_bytes: int = DEFAULT_MAX_DOCUMENT_BYTES
    voice_max_seconds: int = 300  # VOICE_MAX_SECONDS
    voice_on: bool = True  # False: VOICE_TRANSCRIBER=off, voice notes get a notice

    @classmethod
    def from_settings(cls, s: "Settings") -> "MediaLimits":
        """The limits the configuration sets."""
        return cls(
            s.max_image_bytes,
            s.max_document_bytes,
            voice_max_seconds=s.voice_max_seconds,
            voice_on=s.voice_transcriber != "off",
        )


def attachment_of(message: "Message", limits: MediaLimits) -> Attachment | None:
    """The message's file as the turn keeps it, refused with a notice when the model cannot take it; None
    for a message without a file."""
    for kind in NOT_HEARD:
        note: TelegramFile | None = getattr(message, kind)
        if note is not None:
            return audio_attachment(kind, note, limits)
    for kind, notice in NOT_YET.items():
        file: TelegramFile | None = getattr(message, kind)
        if file is not None:
            return _attachment(kind, file, refusal=notice)
    if message.photo:
        return photo_attachment(message.photo, limits.max_image_bytes)
    if message.document is not None:
        return document_attachment(message.document, limits)
    return None


def max_audio_bytes(kind: AttachmentKind, max_seconds: int) -> int:
    """The largest note of `kind` taken: `max_seconds` (VOICE_MAX_SECONDS) at a generous bitrate."""
    return max_seconds * GENEROUS_BYTES_PER_SECOND.get(kind, GENEROUS_BYTES_PER_SECOND["audio"])


def too_large_notice(label: str, size: int, max_seconds: int, cap: int) -> str:
    """The reply to a note larger than `max_seconds` of audio could be (`cap` bytes)."""
    limit = clock_length(max_seconds)
    return (
        f"That {label} is {megabytes(size)}, larger than {limit} of audio should be ({megabytes(cap)} at "
        f"most); I transcribe up to {limit}. Could you send a shorter one, or type it?"
    )


def audio_attachment(kind: AttachmentKind, note: "TelegramFile", limits: MediaLimits) -> Attachment:
    """A voice note, audio file or round video message, to be transcribed; refused with a notice when voice
    is off, when it is longer than VOICE_MAX_SECONDS, larger than that length could be (`max_audio_bytes`)
    or larger than Telegram lets bots download (decided from the update: nothing is downloaded then)."""
    if not limits.voice_on:
        return _attachment(kind, note, refusal=NOT_HEARD[kind])
    label = LABELS[kind]
    if note.duration is not None and note.duration > limits.voice_max_seconds:
        notice = (
            f"That {label} is {clock_length(note.duration)} long; I transcribe up to "
            f"{clock_length(limits.voice_max_seconds)}. Could you send a shorter one, or type it?"
        )
        return _attachment(kind, note, refusal=notice)
    if note.file_size is not None and note.file_size > TELEGRAM_MAX_DOWNLOAD_BYTES:
        notice = (
            f"That {label} is too large for me to download ({megabytes(note.file_size)}; Telegram lets me "
            f"fetch files up to {megabytes(TELEGRAM_MAX_DOWNLOAD_BYTES)}). Could you send a shorter one?"
        )
        return _attachment(kind, note, refusal=notice)
    cap = max_audio_bytes(kind, limits.voice_max_seconds)
    if note.file_size is not None and note.file_size > cap:
        notice = too_large_notice(label, note.file_size, limits.voice_max_seconds, cap)
        return _attachment(kind, note, refusal=notice)
    return _attachment(kind, note)


def clock_length(seconds: int) -> str:
    """A length as the user reads it: 45 s, 5 min, 7 min 3 s."""
    minutes, rest = divmod(seconds, 60)
    if not minutes:
        return f"{rest} s"
    return f"{minutes} min {rest} s" if rest else f"{minutes} min"


def photo_attachment(sizes: "list[PhotoSize]", max_bytes: int) -> Attachment:
    """The largest size of the photo within `max_bytes` (a size without file_size counts as fitting: the
    download checks it), or the smallest, refused, when none fits."""
    by_area = sorted(sizes, key=lambda size: (size.width * size.height, size.file_size or 0))
    fitting = [size for size in by_area if size.file_size is None or size.file_size <= max_bytes]
    if fitting:
        return _attachment("photo", fitting[-1], mime_type="image/jpeg")
    smallest = by_area[0]
    notice = (
        f"That photo is too large for me ({megabytes(smallest.file_size or 0)}; I can look at images up "
        f"to {megabytes(max_bytes)}). Could you send a smaller one?"
    )
    return _attachment("photo", smallest, mime_type="image/jpeg", refusal=notice)


def document_attachment(document: "TelegramFile", limits: MediaLimits) -> Attachment:
    """A document the model reads (PDF, text, image) within its limit, or refused with the reason."""
    readable = model_format(document.mime_type, document.file_name)
    if readable is None:
        name = document.file_name or "that file"
        kind = f" ({document.mime_type})" if document.mime_type else ""
        notice = f"I can read PDFs, text files and images, but not {name}{kind} yet."
        return _attachment("document", document, refusal=notice)
    limit = limits.max_image_bytes if readable == "image" else limits.max_document_bytes
    if document.file_size is not None and document.file_size > limit:
        what = "images" if readable == "image" else "documents"
        name = document.file_name or "That document"
        notice = (
            f"{name} is too large for me ({megabytes(document.file_size)}; I read {what} up to "
            f"{megabytes(limit)}). Could you send a shorter one, or paste the part that matters?"
        )
        return _attachment("document", document, refusal=notice)
    return _attachment("document", document)


def _attachment(
    kind: AttachmentKind,
    file: "TelegramFile",
    *,
    mime_type: str | None = None,
    refusal: str | None = None,
) -> Attachment:
    return Attachment(
        kind=kind,
        file_id=file.file_id,
        size=file.file_size,
        mime_type=file.mime_type or mime_type,
        file_name=file.file_name,
        seconds=file.duration,
        refusal=refusal,
    )
