"""CallModel's downloads: the files of the messages the turn answers, once per invocation."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Protocol

from stepwise.media.formats import model_format
from stepwise.media.render import answered_now
from stepwise.telegram.errors import TelegramError, TelegramTransientError

if TYPE_CHECKING:
    from collections.abc import Sequence

    from stepwise.history.models import StoredMessage
    from stepwise.media.intake import MediaLimits
    from stepwise.media.models import Attachment

logger = logging.getLogger(__name__)

# The Messages API takes requests up to 32 MB; base64 makes files a third larger, and the history needs room.
MAX_FILE_BYTES_PER_REQUEST = 20_000_000


class FileSource(Protocol):
    """Where files come from (the Bot API: getFile, then the file's URL)."""

    def download(self, file_id: str, max_bytes: int) -> bytes:
        """The file's bytes; TelegramError when it cannot be had or has more than `max_bytes`."""
        ...


def fetch_files(
    history: Sequence[StoredMessage], source: FileSource, limits: MediaLimits
) -> dict[str, bytes | None]:
    """The bytes of each file the model gets in this call (by file id; None: it cannot be had). Files past
    `MAX_FILE_BYTES_PER_REQUEST` together are left out (they show as text). Transient Telegram errors
    propagate, so the state's retry fetches again."""
    files: dict[str, bytes | None] = {}
    total = 0
    for message in answered_now(history):
        attachment = message.attachment
        if attachment is None or not attachment.taken or attachment.is_audio or attachment.file_id in files:
            continue
        limit = max_bytes(attachment, limits)
        if total + (attachment.size or 0) > MAX_FILE_BYTES_PER_REQUEST:
            continue
        try:
            data: bytes | None = source.download(attachment.file_id, limit)
        except TelegramTransientError:
            raise
        except TelegramError as error:
            logger.warning("file not fetched: %s", error)
            data = None
        if data is not None and total + len(data) > MAX_FILE_BYTES_PER_REQUEST:
            continue
        total += len(data or b"")
        files[attachment.file_id] = data
    return files


def max_bytes(attachment: Attachment, limits: MediaLimits) -> int:
    """The most a file may have: the image limit for photos and images, else the document limit."""
    image = attachment.kind == "photo" or model_format(attachment.mime_type, attachment.file_name) == "image"
    return limits.max_image_bytes if image else limits.max_document_bytes
