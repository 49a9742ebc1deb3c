"""In-memory BusinessConnectionStore (secretary mode's business connections and their owners' settings) for
unit tests."""

from __future__ import annotations

from stepwise.secretary.connections import Flag, SecretaryConnection
from stepwise.secretary.owners import OwnerSettings, muted_key


class InMemoryBusinessConnectionStore:
    """Connections by id and owners' settings in dicts, with the DynamoDB adapter's conditions."""

    def __init__(self) -> None:
        self.connections: dict[str, SecretaryConnection] = {}
        self.off: dict[int, bool] = {}
        self.muted: dict[int, dict[str, str]] = {}  # owner -> muted_key -> the name as muted

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

    def of_owner(self, owner_id: int) -> list[SecretaryConnection]:
        return [c for c in self.connections.values() if c.owner_id == owner_id]

    def owner_settings(self, owner_id: int) -> OwnerSettings:
        muted = self.muted.get(owner_id, {})
        return OwnerSettings(self.off.get(owner_id, False), tuple(muted[key] for key in sorted(muted)))

    def set_off(self, owner_id: int, off: bool) -> bool:
        changed = self.off.get(owner_id, False) != off
        self.off[owner_id] = off
        return changed

    def mute(self, owner_id: int, name: str) -> bool:
        muted = self.muted.setdefault(owner_id, {})
        if muted_key(name) in muted:
            return False
        muted[muted_key(name)] = name
        return True

    def unmute(self, owner_id: int, name: str) -> bool:
        return self.muted.get(owner_id, {}).pop(muted_key(name), None) is not None
