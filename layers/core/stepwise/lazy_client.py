"""A boto3 client made on its first use.

Creating a client costs about 10 ms of CPU (its service model, endpoint rules and event hooks), and a state
often holds adapters it never calls: CallModel offers the reminder and memory tools but never runs them,
LoadContext holds the sequencer's Step Functions starter but a plain turn starts nothing. The adapters take
a `LazyClient` like any client.
"""

from __future__ import annotations

import threading
from typing import Any


class LazyClient:
    """Stands in for `boto3.client(service, **options)`: every attribute is the real client's, made on first
    access."""

    def __init__(self, service: str, **options: Any) -> None:
        self._service = service
        self._options = options
        self._client: Any = None
        self._lock = threading.Lock()  # warm-up and worker threads may reach it at once

    @property
    def client(self) -> Any:
        """The real client (made now, if this is its first use)."""
        if self._client is None:
            with self._lock:
                if self._client is None:
                    import boto3

                    self._client = boto3.client(self._service, **self._options)
        return self._client

    def __getattr__(self, name: str) -> Any:
        return getattr(self.client, name)

    def __repr__(self) -> str:
        made = "made" if self._client is not None else "not made yet"
        return f"LazyClient({self._service!r}, {made})"
