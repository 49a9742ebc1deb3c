"""The port of the accounts' store: people's tokens per (person, server), sign-ins under way, and the client
registered at each server. An adapter keeps tokens, PKCE verifiers and client secrets encrypted."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from stepwise.accounts.models import Account, PendingSignIn, RegisteredClient


class AccountStore(Protocol):
    """Accounts, pending sign-ins and registered clients."""

    def get(self, user_id: int, server: str) -> Account | None:
        """The person's account at the server, or None (never connected, disconnected, or its tokens no
        longer open: then it is as good as gone, and one line says so)."""
        ...

    def list(self, user_id: int) -> list[Account]:
        """The person's accounts, by server name."""
        ...

    def put(self, account: Account) -> Account:
        """Keep a newly connected account, replacing any earlier one of the same person and server; returns
        it with the version it was kept at (above any earlier one's, so a refresh of the earlier one is not
        kept over it)."""
        ...

    def replace(self, account: Account, expected_version: int) -> bool:
        """Keep `account` (rotated tokens) at version `expected_version + 1`, only if the kept account is
        still at `expected_version`; False when another writer got there first (or it was removed)."""
        ...

    def delete(self, user_id: int, server: str, version: int | None = None) -> bool:
        """Forget the account (only if it is at `version`, when given); False when there was none to
        forget."""
        ...

    def add_sign_in(self, sign_in: PendingSignIn) -> None:
        """Keep a sign-in under way until its callback or its expiry."""
        ...

    def take_sign_in(self, state: str) -> PendingSignIn | None:
        """Remove and return the sign-in of `state`, at most once: a second take (the same callback again, or
        a race) gets None, as does a state never made. An expired one is returned (and used up) for the
        caller to refuse with its own words; the store's expiry removes it in time anyway."""
        ...

    def get_client(self, server: str) -> RegisteredClient | None:
        """The client registered at the server, or None."""
        ...

    def put_client(self, client: RegisteredClient) -> None:
        """Keep the client registered at its server (replacing one the server forgot)."""
        ...


class AccountMarks(Protocol):
    """The marks on each person's profile naming the servers they have an account at: read with their time
    zone at a turn's start, so a person with none costs no accounts' query (the reminders' store keeps them,
    `stepwise.reminders.store.Profile`). Marked before an account is kept and unmarked after it is forgotten,
    so the marks are never fewer than the accounts."""

    def mark_account(self, user_id: int, server: str) -> None: ...

    def unmark_account(self, user_id: int, server: str) -> None: ...
