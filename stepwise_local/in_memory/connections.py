"""An in-memory ConnectionStore for unit tests and the local chat."""

from __future__ import annotations

from stepwise.connections.models import Connection
from stepwise.connections.store import NameTaken


class InMemoryConnectionStore:
    """Connections keyed by (user, name), with their request counters."""

    def __init__(self) -> None:
        self.connections: dict[tuple[int, str], Connection] = {}
        self.counts: dict[tuple[str, int], int] = {}

    def create(self, connection: Connection) -> None:
        key = (connection.user_id, connection.name)
        active = self.connections.get(key)
        if active is not None and active.pending:
            active = None  # a pending one (never delivered) is made again
        if active is not None and active.created_by_turn != connection.created_by_turn:
            raise NameTaken(connection.name)
        self.connections[key] = connection.model_copy()

    def activate(self, user_id: int, name: str, turn_id: str, token_hash: str) -> bool:
        connection = self.connections.get((user_id, name))
        if connection is None or connection.created_by_turn != turn_id:
            return False
        connection.token_hash = token_hash
        return True

    def find(self, token_hash: str) -> Connection | None:
        return next((c for c in self.connections.values() if c.token_hash == token_hash), None)

    def list(self, user_id: int) -> list[Connection]:
        return sorted((c for (u, _), c in self.connections.items() if u == user_id), key=lambda c: c.name)

    def revoke(self, user_id: int, name: str, made_by: str | None = None) -> bool:
        connection = self.connections.get((user_id, name))
        if connection is None or made_by not in (None, connection.created_by_turn):
            return False
        del self.connections[(user_id, name)]
        return True

    def count_request(self, token_hash: str, window: int, limit: int) -> bool:
        count = self.counts.get((token_hash, window), 0)
        if count >= limit:
            return False
        self.counts[(token_hash, window)] = count + 1
        return True
