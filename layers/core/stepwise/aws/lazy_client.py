"""A boto3 client, or an adapter, made on its first use.

Creating a client costs about 10 ms of CPU (its service model, endpoint rules and event hooks), and a state
often holds adapters it never calls: CallModel offers the reminder and memory tools but never runs them,
LoadContext holds the sequencer's Step Functions starter but a plain turn starts nothing. The adapters take
a `LazyClient` like any client. Likewise the turn's services hold adapters that most states never use (the
approvals', the endpoint's tokens, the jobs', the audit log, the skills): `lazy` makes each, with its
imports and its table, when a state first uses it.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any, cast

import boto3

if TYPE_CHECKING:
    from collections.abc import Callable


class LazyAdapter:
    """Stands in for `make()`'s result: every attribute is the real adapter's, made on first access."""

    def __init__(self, make: Callable[[], Any]) -> None:
        self._make = make
        self._adapter: Any = None
        self._lock = threading.Lock()  # warm-up and worker threads may reach it at once

    @property
    def adapter(self) -> Any:
        """The real adapter (made now, if this is its first use)."""
        if self._adapter is None:
            with self._lock:
                if self._adapter is None:
                    self._adapter = self._make()
        return self._adapter

    def __getattr__(self, name: str) -> Any:
        return getattr(self.adapter, name)

    def __repr__(self) -> str:
        return f"LazyAdapter({self._adapter!r})" if self._adapter is not None else "LazyAdapter(not made yet)"


class LazyClient(LazyAdapter):
    """Stands in for `boto3.client(service, **options)`: every attribute is the real client's, made on first
    access."""

    def __init__(self, service: str, **options: Any) -> None:
        super().__init__(lambda: _boto3_client(service, options))
        self._service = service

    @property
    def client(self) -> Any:
        """The real client (made now, if this is its first use)."""
        return self.adapter

    def __repr__(self) -> str:
        made = "made" if self._adapter is not None else "not made yet"
        return f"LazyClient({self._service!r}, {made})"


def _boto3_client(service: str, options: dict[str, Any]) -> Any:
    return boto3.client(service, **options)


def lazy[T](make: Callable[[], T]) -> T:
    """`make()`'s adapter, made when first used (typed as the adapter, which it stands in for)."""
    return cast("T", LazyAdapter(make))
