"""/accounts: the person's own accounts at the servers list's OAuth servers (docs/accounts.md).

`/accounts` lists each OAuth server as connected (since when) or not, with a **Connect <name>** button (a url
button to the server's sign-in page, through a new sign-in's state) for each one not connected;
`/accounts disconnect <name>` forgets the person's tokens there (revoking them at the server when it can).
In a group the table points to the private chat (the command is `personal`): a member's accounts are theirs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from stepwise.commands.handlers import WithLinks

if TYPE_CHECKING:
    from stepwise.accounts.access import AccountsAccess
    from stepwise.commands.handlers import CommandRequest

NOT_DEPLOYED = "Accounts at outside servers are not set up in this deployment."
NO_SERVERS = "No outside server here signs people in: there are no accounts to connect."
USAGE = "/accounts lists your accounts at outside servers; /accounts disconnect <name> forgets one."


def accounts(request: CommandRequest) -> str | WithLinks:
    """List the person's accounts with Connect buttons, or disconnect one (see the module docstring)."""
    access = request.services.stores.accounts
    if access is None:
        return NOT_DEPLOYED
    words = request.args.split()
    if not words:
        return _listing(access, request.meta.user_id)
    if words[0].casefold() == "disconnect" and len(words) == 2:
        return _disconnect(access, request.meta.user_id, words[1])
    return USAGE


def _listing(access: AccountsAccess, user_id: int) -> str | WithLinks:
    # The flow's module loads the MCP SDK's OAuth helpers: only a turn that lists accounts pays for it.
    from stepwise.accounts.flow import CannotConnect

    servers = access.servers()
    if not servers:
        return NO_SERVERS
    connected = {account.server: account for account in access.store().list(user_id)}
    if connected:
        access.flow().mark_connected(user_id, sorted(connected))
    lines: list[str] = []
    links: list[tuple[str, str]] = []
    for entry in servers:
        account = connected.get(entry.name)
        if account is not None:
            lines.append(f"- {entry.name}: connected (since {account.connected_at[:10]})")
            continue
        try:
            started = access.flow().start_sign_in(user_id, entry, access.callback_url)
        except CannotConnect as problem:
            lines.append(f"- {entry.name}: can't connect ({problem})")
            continue
        lines.append(f"- {entry.name}: not connected")
        links.append((f"Connect {entry.name}", started.url))
    text = "Your accounts at outside servers:\n" + "\n".join(lines)
    if links:
        text += "\n\nTap a Connect button below to sign in there (each works for a few minutes; /accounts "
        text += "again gives fresh ones)."
    if connected:
        text += "\n\n/accounts disconnect <name> forgets an account."
    return WithLinks(text, tuple(links)) if links else text


def _disconnect(access: AccountsAccess, user_id: int, name: str) -> str:
    entry = access.server(name)
    if entry is None:
        names = ", ".join(e.name for e in access.servers())
        if not names:
            return NO_SERVERS
        return f"There is no server named “{name}” here. The servers are: {names}."
    if access.flow().disconnect(user_id, entry.name):
        return f"Disconnected {entry.name}: its tools are gone for you."
    return f"You were not connected to {entry.name}."
