"""A stored message as content blocks: the file itself for the messages a turn answers, a short text for
the others.

A photo or document goes to the model as an image or document block only in the turn that answers it (the
user messages after the window's last assistant message); in every later turn it is one line of text,
`[photo: caption]`, so an old photo costs a few tokens instead of ~1,600 per turn and CallModel downloads
only the new files. Both forms depend only on the stored history, so the same history renders the same
bytes in every call (prompt caching); a message changes form once, when its turn is over.
"""

from __future__ import annotations

import base64
from typing import TYPE_CHECKING

from stepwise.history.forwarded import marker
from stepwise.media.formats import model_format

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from stepwise.history.models import StoredMessage
    from stepwise.media.models import Attachment, Heard
    from stepwise.model.blocks import Base64Source, DocumentBlock, FileBlock, PlainTextSource, TextBlock

LABELS = {
    "photo": "photo",
    "document": "document",
    "voice": "voice note",
    "audio": "audio file",
    "video": "video",
    "video_note": "video message",
    "animation": "GIF",
    "sticker": "sticker",
}
NOT_FETCHED = "the file could not be fetched from Telegram"


def answered_now(history: Sequence[StoredMessage]) -> list[StoredMessage]:
    """The user messages after the last assistant message: those the turn answers."""
    trailing: list[StoredMessage] = []
    for message in reversed(history):
        if message.role != "user":
            break
        trailing.append(message)
    return trailing[::-1]


def content_blocks(message: StoredMessage, files: Mapping[str, bytes | None]) -> list[TextBlock | FileBlock]:
    """The message's blocks: with its file when `files` has it (bytes), else its text (and a line about the
    file). `files` maps a file id to its bytes, or to None when fetching it failed for good. A forwarded
    message's text follows the line naming its origin, in one block (see `stepwise.history.forwarded`). In a
    group, a block naming the member who wrote it comes first (docs/groups.md)."""
    blocks = _own_blocks(message, files)
    if message.forwarded is not None:
        texts = [block["text"] for block in blocks if block["type"] == "text"]
        framed = "\n".join([marker(message.forwarded), *texts])
        blocks = [*(block for block in blocks if block["type"] != "text"), _text(framed)]
    if message.sender is not None and blocks:  # a group member's message: who wrote it, first
        return [_text(sender_line(message.sender)), *blocks]
    return blocks


def sender_line(name: str) -> str:
    """The line before a group member's message: their first name, on one line (a name cannot pose as the
    message, or as Stepwise's own context)."""
    flat = " ".join("".join(c if c.isprintable() else " " for c in name).split()) or "Member"
    return f"From {flat}:"


def _own_blocks(message: StoredMessage, files: Mapping[str, bytes | None]) -> list[TextBlock | FileBlock]:
    attachment = message.attachment
    caption = message.content
    if message.heard is not None:
        return [*heard_blocks(message.heard, LABELS[attachment.kind] if attachment else "voice note")]
    if attachment is None:
        return [_text(caption)] if caption.strip() else []
    if attachment.refusal is not None:
        told = f"not passed on to you; the user was told: {attachment.refusal}"
        return [_text(f"{placeholder(attachment, caption)} ({told})")]
    if attachment.file_id not in files:
        return [_text(placeholder(attachment, caption))]
    data = files[attachment.file_id]
    if data is None:
        return [_text(f"{placeholder(attachment, caption)} ({NOT_FETCHED})")]
    block = file_block(attachment, data)
    if block is None:
        return [_text(f"{placeholder(attachment, caption)} (an empty file)")]
    return [block, *([_text(caption)] if caption.strip() else [])]


def heard_blocks(heard: Heard, label: str) -> list[TextBlock]:
    """A voice note (audio file, video message) as the model reads it: a line saying it was spoken and
    transcribed (with its caption), then the words as the message's text; or one line when nothing could be
    heard or transcribed."""
    caption = f"; its caption: {heard.caption.strip()}" if heard.caption.strip() else ""
    if heard.status == "heard":
        return [_text(f"[{label}, transcribed automatically{caption}]"), _text(heard.text)]
    if heard.status == "silent":
        return [_text(f"[{label}: nothing could be heard in it{caption}]")]
    return [_text(f"[{label} that could not be transcribed{caption}]")]


def placeholder(attachment: Attachment, caption: str) -> str:
    """The one line that stands for a file: `[photo: caption]`, `[document report.pdf]`."""
    label = LABELS[attachment.kind]
    if attachment.file_name:
        label = f"{label} {attachment.file_name}"
    return f"[{label}: {caption.strip()}]" if caption.strip() else f"[{label}]"


def file_block(attachment: Attachment, data: bytes) -> FileBlock | None:
    """The Messages API block of a file the model reads: image, PDF document or text document (None for an
    empty text file, which the API would refuse)."""
    readable = (
        "image" if attachment.kind == "photo" else model_format(attachment.mime_type, attachment.file_name)
    )
    if readable == "image":
        media_type = attachment.mime_type or "image/jpeg"
        return {"type": "image", "source": _base64(media_type, data)}
    if readable == "pdf":
        document: DocumentBlock = {"type": "document", "source": _base64("application/pdf", data)}
    else:
        text = data.decode("utf-8", errors="replace")
        if not text.strip():
            return None
        source: PlainTextSource = {"type": "text", "media_type": "text/plain", "data": text}
        document = {"type": "document", "source": source}
    if attachment.file_name:
        document["title"] = attachment.file_name
    return document


def _base64(media_type: str, data: bytes) -> Base64Source:
    return {"type": "base64", "media_type": media_type, "data": base64.b64encode(data).decode("ascii")}


def _text(text: str) -> TextBlock:
    return {"type": "text", "text": text}
