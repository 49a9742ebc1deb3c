"""A local address where nothing listens, so connecting is refused: Telegram unreachable, nothing sent."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def refusing_base_url() -> Iterator[str]:
    """``http://127.0.0.1:PORT`` of a port that is bound (so nobody else takes it) but never listens."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
