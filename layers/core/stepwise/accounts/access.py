"""How a turn, the sign-in callback and the Mini App reach people's accounts: built once per container by the
composition root (`stepwise.runtime`), in memory by the tests."""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from stepwise.accounts.flow import AccountFlow
    from stepwise.accounts.store import AccountStore
    from stepwise.remote_tools.config import ServerEntry


class AccountsAccess(NamedTuple):
    """The store (made on first use: its key is read from SSM then), the OAuth flow (the MCP SDK's helpers,
    loaded on first use), the servers list's OAuth entries, and this deployment's callback URL."""

    store: Callable[[], AccountStore]
    flow: Callable[[], AccountFlow]
    servers: Callable[[], Sequence[ServerEntry]]
    callback_url: str

    def server(self, name: str) -> ServerEntry | None:
        """The OAuth entry of that name (any case), None when the list has none."""
        wanted = name.strip().casefold()
        return next((entry for entry in self.servers() if entry.name.casefold() == wanted), None)
