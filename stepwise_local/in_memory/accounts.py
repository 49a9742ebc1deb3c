"""An in-memory AccountStore for unit tests and the local chat (the same behaviour as the DynamoDB adapter;
memory is not at rest, so nothing is sealed here)."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from stepwise.accounts.models import Account, PendingSignIn, RegisteredClient


class InMemoryAccountStore:
    """Accounts by (user, server), sign-ins by state and clients by server, in dicts (thread-safe, like
    DynamoDB's conditional writes)."""

    def __init__(self) -> None:
        self.accounts: dict[tuple[int, str], Account] = {}
        self.sign_ins: dict[str, PendingSignIn] = {}
        self.clients: dict[str, RegisteredClient] = {}
        self._lock = threading.Lock()

    def get(self, user_id: int, server: str) -> Account | None:
        return self.accounts.get((user_id, server))

    def list(self, user_id: int) -> list[Account]:
        return sorted((a for (u, _), a in self.accounts.items() if u == user_id), key=lambda a: a.server)

    def put(self, account: Account) -> Account:
        with self._lock:
            earlier = self.accounts.get((account.user_id, account.server))
            kept = account._replace(version=(earlier.version if earlier else 0) + 1)
            self.accounts[(account.user_id, account.server)] = kept
            return kept

    def replace(self, account: Account, expected_version: int) -> bool:
        with self._lock:
            kept = self.accounts.get((account.user_id, account.server))
            if kept is None or kept.version != expected_version:
                return False
            self.accounts[(account.user_id, account.server)] = account._replace(version=expected_version + 1)
            return True

    def delete(self, user_id: int, server: str, version: int | None = None) -> bool:
        with self._lock:
            kept = self.accounts.get((user_id, server))
            if kept is None or version not in (None, kept.version):
                return False
            del self.accounts[(user_id, server)]
            return True

    def add_sign_in(self, sign_in: PendingSignIn) -> None:
        with self._lock:
            self.sign_ins[sign_in.state] = sign_in

    def take_sign_in(self, state: str) -> PendingSignIn | None:
        with self._lock:
            return self.sign_ins.pop(state, None)

    def get_client(self, server: str) -> RegisteredClient | None:
        return self.clients.get(server)

    def put_client(self, client: RegisteredClient) -> None:
        with self._lock:
            self.clients[client.server] = client
