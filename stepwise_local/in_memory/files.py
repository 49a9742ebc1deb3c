"""An in-memory FileSource (the Bot API's getFile and downloads) for unit tests."""

from __future__ import annotations

from stepwise.telegram.errors import TelegramBadRequest, TelegramError


class InMemoryFiles:
    """Files by file id; `fail_next` makes the next download raise."""

    def __init__(self) -> None:
        self.files: dict[str, bytes] = {}
        self.downloads: list[str] = []
        self._failures: list[TelegramError] = []

    def add(self, file_id: str, data: bytes) -> str:
        self.files[file_id] = data
        return file_id

    def fail_next(self, error: TelegramError) -> None:
        self._failures.append(error)

    def download(self, file_id: str, max_bytes: int) -> bytes:
        self.downloads.append(file_id)
        if self._failures:
            raise self._failures.pop(0)
        data = self.files.get(file_id)
        if data is None:
            raise TelegramBadRequest("getFile", 400, "Bad Request: invalid file_id")
        if len(data) > max_bytes:
            raise TelegramBadRequest("getFile", None, f"the file has more than {max_bytes} bytes")
        return data
