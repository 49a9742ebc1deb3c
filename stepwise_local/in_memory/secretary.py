"""In-memory BusinessConnectionStore (secretary mode's business connections and their owners' settings) and
SuggestionStore, for unit and behaviour tests."""

from __future__ import annotations

from stepwise.secretary.connections import Flag, SecretaryConnection
from stepwise.secretary.owners import OwnerSettings, muted_key
from stepwise.secretary.suggestions import OPEN_STATUSES, Suggestion, SuggestionStatus


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


class InMemorySuggestionStore:
    """Suggestions by (owner, chat) and Edit prompts in dicts, with the DynamoDB adapter's conditions."""

    def __init__(self) -> None:
        self.suggestions: dict[tuple[int, int], Suggestion] = {}
        self.prompts: dict[tuple[int, int], tuple[int, str]] = {}
        self.budget_notes: dict[tuple[int, str], tuple[set[str], int | None]] = {}

    def get(self, owner_id: int, chat_id: int) -> Suggestion | None:
        return self.suggestions.get((owner_id, chat_id))

    def of_owner(self, owner_id: int) -> list[Suggestion]:
        return [s for (owner, _), s in self.suggestions.items() if owner == owner_id]

    def put(self, suggestion: Suggestion) -> None:
        self.suggestions[(suggestion.owner_id, suggestion.chat_id)] = suggestion

    def settle(
        self,
        owner_id: int,
        chat_id: int,
        approval_id: str,
        status: SuggestionStatus,
        expected: frozenset[SuggestionStatus] = OPEN_STATUSES,
    ) -> bool:
        kept = self.suggestions.get((owner_id, chat_id))
        if kept is None or kept.approval_id != approval_id or kept.status not in expected:
            return False
        self.suggestions[(owner_id, chat_id)] = kept._replace(status=status)
        return True

    def revise(
        self, owner_id: int, chat_id: int, approval_id: str, text: str, message_id: int | None
    ) -> bool:
        kept = self.suggestions.get((owner_id, chat_id))
        if kept is None or kept.approval_id != approval_id or kept.status != "pending":
            return False
        shown = kept.message_id if message_id is None else message_id
        self.suggestions[(owner_id, chat_id)] = kept._replace(text=text, message_id=shown)
        return True

    def show_in(self, owner_id: int, chat_id: int, approval_id: str, message_id: int) -> None:
        kept = self.suggestions.get((owner_id, chat_id))
        if kept is not None and kept.approval_id == approval_id:
            self.suggestions[(owner_id, chat_id)] = kept._replace(message_id=message_id)

    def put_edit_prompt(self, owner_id: int, prompt_message_id: int, chat_id: int, approval_id: str) -> None:
        self.prompts[(owner_id, prompt_message_id)] = (chat_id, approval_id)

    def edit_prompt(self, owner_id: int, prompt_message_id: int) -> tuple[int, str] | None:
        return self.prompts.get((owner_id, prompt_message_id))

    def note_over_budget(self, owner_id: int, day: str, contact: str) -> tuple[list[str], int | None]:
        names, message_id = self.budget_notes.setdefault((owner_id, day), (set(), None))
        names.add(contact or "Someone")
        return sorted(names), message_id

    def set_budget_message(self, owner_id: int, day: str, message_id: int) -> None:
        names, _ = self.budget_notes.setdefault((owner_id, day), (set(), None))
        self.budget_notes[(owner_id, day)] = (names, message_id)
