"""In-memory BusinessConnectionStore (secretary mode's business connections) for unit tests."""

from __future__ import annotations

from stepwise.secretary.connections import Flag, SecretaryConnection


class InMemoryBusinessConnectionStore:
    """Connections by id in a dict, with the DynamoDB adapter's conditions."""

    def __init__(self) -> None:
        self.connections: dict[str, SecretaryConnection] = {}

    def get(self, connection_id: str) -> SecretaryConnection | None:
        return self.connections.get(connection_id)

    def save(self, connection: SecretaryConnection) -> None:
        kept = self.connections.get(connection.connection_id)
        if kept is not None and kept.date > connection.date:
            return
        flags = (kept.welcomed, kept.stop_told) if kept is not None else (False, False)
        self.connections[connection.connection_id] = connection._replace(
            welcomed=flags[0], stop_told=flags[1]
        )

    def claim(self, connection_id: str, flag: Flag, value: bool) -> bool:
        kept = self.connections.get(connection_id)
        if kept is None or getattr(kept, flag) == value:
            return False
        self.connections[connection_id] = kept._replace(**{flag: value})
        return True
