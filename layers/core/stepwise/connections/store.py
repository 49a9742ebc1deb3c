"""The port of the connections' store, and its errors."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from stepwise.connections.models import Connection


class NameTaken(Exception):
    """The user has a connection of that name already (made by another turn)."""


class ConnectionStore(Protocol):
    """Named tokens per user, found by their hash; and the per-token request counters of the rate limit."""

    def create(self, connection: Connection) -> None:
        """Store a new connection. A connection of the same user and name made by the same turn (a retried
        turn: its token was never shown) is replaced; one made by another turn raises NameTaken."""
        ...

    def find(self, token_hash: str) -> Connection | None:
        """The connection of a token's hash; None when there is none (never made, or revoked)."""
        ...

    def list(self, user_id: int) -> list[Connection]:
        """The user's connections, by name."""
        ...

    def revoke(self, user_id: int, name: str) -> bool:
        """End a connection: its token no longer works. False when the user has none of that name."""
        ...

    def count_request(self, token_hash: str, window: int, limit: int) -> bool:
        """Count one request of a token in the time window `window` (e.g. the epoch minute); False when the
        window holds `limit` requests already (the request is refused, not counted)."""
        ...
