"""People's own access tokens at the OAuth servers of the servers list (`"auth": "oauth"`, docs/accounts.md).

A person's accounts are read once per turn's invocation (`connected`: one query), and their tokens are used as
kept; an access token past its lifetime is refreshed first (`AccountFlow.current`), and one the server
answered 401 to is refreshed once (`renewed`). The flow (and with it the MCP SDK) is loaded only then: a call
with a token in its lifetime imports nothing more. No token is ever logged or put in an error.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING

from stepwise.remote_tools.client import RemoteCallError
from stepwise.remote_tools.results import CALL_FAILED, marker
from stepwise.turn_records.models import LinkButton, LinkButtons

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from stepwise.accounts.access import AccountsAccess
    from stepwise.accounts.flow import AccountFlow, Disconnected
    from stepwise.accounts.models import Account
    from stepwise.turn_records.models import ModelStep, TurnMeta

logger = logging.getLogger(__name__)

# Marks the result of a call whose account must be connected again; the reply then carries the server's
# Connect button (`stepwise.remote_tools.personal.servers_to_reconnect`).
RECONNECT = "Connect it again with /accounts"


class AccountNeeded(RemoteCallError):
    """The person has no usable account at the server (never connected, disconnected, or a refresh refused):
    nothing was sent, and the person must connect it (again)."""

    def __init__(self, server: str, why: str) -> None:
        super().__init__(f"your account at “{server}” is not connected ({why}). {RECONNECT} [{server}]")
        self.counts = False
        self.server = server


class AccountTokens:
    """The access tokens of people's accounts, from the accounts' store (and its flow when they must be
    refreshed)."""

    def __init__(self, access: AccountsAccess, now: Callable[[], float] = time.time) -> None:
        self._access = access
        self._now = now
        self._known: dict[tuple[int, str], Account] = {}  # the accounts as last read or refreshed

    def connected(self, user_id: int) -> set[str]:
        """The servers the person has an account at (read now: one query), kept for the calls that follow."""
        accounts = self._access.store().list(user_id)
        for key in [key for key in self._known if key[0] == user_id]:
            del self._known[key]
        self._known.update({(user_id, account.server): account for account in accounts})
        return {account.server for account in accounts}

    def headers(self, user_id: int, server: str) -> dict[str, str]:
        """The person's bearer header for the server: the kept access token, refreshed first when it is past
        its lifetime. AccountNeeded when there is no account, or its refresh was refused."""
        account = self._known.get((user_id, server)) or self._access.store().get(user_id, server)
        if account is None:
            raise AccountNeeded(server, "it was never connected, or it was disconnected")
        if account.expired(self._now()):
            account = self._settle(user_id, server, lambda flow: flow.current(user_id, server))
        return _bearer(account)

    def renewed(self, user_id: int, server: str) -> dict[str, str]:
        """After the server answered 401 to the person's token: the account refreshed once, its new header."""
        account = self._known.get((user_id, server)) or self._access.store().get(user_id, server)
        if account is None:
            raise AccountNeeded(server, "it was disconnected")
        logger.info(f"MCP server {server}: user {user_id}'s token was refused; refreshing it once")
        known = account
        return _bearer(self._settle(user_id, server, lambda flow: flow.refresh(known)))

    def _settle(
        self, user_id: int, server: str, step: Callable[[AccountFlow], Account | Disconnected | None]
    ) -> Account:
        # The OAuth flow loads the MCP SDK: only a refresh needs it.
        from stepwise.accounts.flow import CannotConnect, Disconnected

        try:
            outcome = step(self._access.flow())
        except CannotConnect as problem:
            raise RemoteCallError(
                f"the account's token could not be refreshed ({problem})", counts=False
            ) from None
        if outcome is None:
            self._known.pop((user_id, server), None)
            raise AccountNeeded(server, "it was disconnected")
        if isinstance(outcome, Disconnected):
            self._known.pop((user_id, server), None)
            raise AccountNeeded(server, outcome.reason)
        self._known[(user_id, server)] = outcome
        return outcome


def _bearer(account: Account) -> dict[str, str]:
    return {"Authorization": f"Bearer {account.access_token}"}


def reconnect_buttons(
    meta: TurnMeta, steps: Sequence[ModelStep], access: AccountsAccess | None
) -> LinkButtons | None:
    """The Connect buttons a turn's reply carries for the accounts its calls found disconnected (a refused
    refresh): a new sign-in for each, as `/accounts` makes them; None when there are none (or none can be
    started now: the result already told the person to use /accounts)."""
    if access is None or meta.scope.in_group:
        return None
    texts = [
        str(result.get("content", ""))
        for step in steps
        for result in step.tool_results
        if result.get("is_error")
    ]
    servers = servers_to_reconnect(texts)
    if not servers:
        return None
    from stepwise.accounts.flow import CannotConnect  # the OAuth flow loads the MCP SDK: only this path

    buttons: list[LinkButton] = []
    for name in servers:
        entry = access.server(name)
        if entry is None:
            continue
        try:
            started = access.flow().start_sign_in(meta.user_id, entry, access.callback_url)
        except CannotConnect as problem:
            logger.warning(f"MCP server {name}: no Connect button for user {meta.user_id} ({problem})")
            continue
        buttons.append(LinkButton(text=f"Connect {entry.name}", url=started.url))
    return LinkButtons(buttons=buttons) if buttons else None


def servers_to_reconnect(results: list[str]) -> list[str]:
    """The servers whose accounts the turn's tool results say must be connected again, in order, once each.

    Only a result that is, from its first line, this code's own report of `AccountNeeded` for the server
    whose result it is counts: an outside server's text comes after its marker line, so whatever it writes
    can name no other server, and a failure it imitates for itself offers its own sign-in, no more."""
    found: list[str] = []
    for text in results:
        head, _, rest = text.partition("\n")
        server = _framing_server(head)
        if server is None or server in found:
            continue
        if rest.startswith(f"{CALL_FAILED}your account at “{server}” is not connected (") and (
            f"{RECONNECT} [{server}]" in rest.partition("\n")[0]
        ):
            found.append(server)
    return found


def _framing_server(head: str) -> str | None:
    """The server whose marker line `head` is (`remote_tools.results.marker`), or None."""
    before, _, after = marker("\x00").partition("\x00")  # the marker's text around the server's name
    if not (head.startswith(before) and head.endswith(after)) or len(head) <= len(before) + len(after):
        return None
    return head[len(before) : len(head) - len(after)]
