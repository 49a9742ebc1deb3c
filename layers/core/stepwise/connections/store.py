"""The port of the connections' store, and its errors."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from stepwise.connections.models import Connection


class NameTaken(Exception):
    """The user has an active connection of that name already (made by another turn)."""


class ConnectionStore(Protocol):
    """Named tokens per user, found by their hash; and the per-token request counters of the rate limit."""

    def create(self, connection: Connection) -> None:
        """Store a new connection, pending (no hash: its token is made when it is sent). A connection of the
        same user and name made by the same turn (a retried turn: its token was never shown) or a pending one
        (its turn ended without delivering it) is replaced; an active one of another turn raises NameTaken."""
        ...

    def activate(self, user_id: int, name: str, turn_id: str, token_hash: str) -> bool:
        """Give the connection made by `turn_id` its token's hash: from now on that token works (an earlier
        hash of it no longer does). False when there is no such connection (revoked, or made by another
        turn): the token must not be shown."""
        ...

    def find(self, token_hash: str) -> Connection | None:
        """The connection of a token's hash; None when there is none (never made, or revoked)."""
        ...

    def list(self, user_id: int) -> list[Connection]:
        """The user's connections, by name."""
        ...

    def revoke(self, user_id: int, name: str, made_by: str | None = None) -> bool:
        """End a connection: its token no longer works. False when the user has none of that name (or, with
        `made_by`, none made by that turn)."""
        ...

    def count_request(self, token_hash: str, window: int, limit: int) -> bool:
        """Count one request of a token in the time window `window` (e.g. the epoch minute); False when the
        window holds `limit` requests already (the request is refused, not counted)."""
        ...
