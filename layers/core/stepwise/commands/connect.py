"""/connect: the user's tokens for their own MCP clients (Claude Code, Claude Desktop, any client that sends
a bearer token) to reach Stepwise's `/mcp` endpoint as them.

`/connect <name>` makes a token and shows it once with the endpoint's URL, `/connect` lists the user's
tokens, `/connect revoke <name>` ends one. The token itself is never stored: the answer has a slot for it and
a seed, and FinishTurn makes the token as it sends the answer (`stepwise.connections.minting`); only its hash
is kept. The chat's history keeps the answer without it (`ShownOnce`): it is not sent to the model with later
messages.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from stepwise.commands.handlers import ShownOnce
from stepwise.connections.minting import TOKEN_SLOT, new_seed
from stepwise.connections.models import MAX_CONNECTIONS, Connection, valid_name
from stepwise.connections.store import NameTaken

if TYPE_CHECKING:
    from stepwise.commands.handlers import CommandRequest

USAGE = (
    "/connect <name> makes a token for an MCP client (e.g. /connect laptop), /connect lists yours, "
    "/connect revoke <name> ends one."
)
BAD_NAME = "A token's name is 1-32 letters, digits, dots, dashes or underscores, e.g. /connect laptop."


def connect(request: CommandRequest) -> str | ShownOnce:
    """Create, list or revoke the user's tokens (see the module docstring)."""
    services, meta = request.services, request.meta
    store = services.stores.connections
    if store is None or not services.settings.deployment.mcp_url:
        return "The MCP endpoint is not deployed here."
    if meta.chat_id != meta.user_id:
        return "Tokens act as you: ask for one in our private chat, not in a group."
    words = request.args.split()
    if not words:
        return _listing(store.list(meta.user_id), services.settings.deployment.mcp_url)
    if words[0] == "revoke":
        if len(words) != 2:
            return USAGE
        if store.revoke(meta.user_id, words[1]):
            return f"Revoked “{words[1]}”: that token no longer works."
        return f"You have no token named “{words[1]}”. /connect lists yours."
    if len(words) != 1:
        return USAGE
    return _create(request, words[0])


def _create(request: CommandRequest, name: str) -> str | ShownOnce:
    services, meta = request.services, request.meta
    store = services.stores.connections
    assert store is not None
    if not valid_name(name):
        return BAD_NAME
    existing = store.list(meta.user_id)
    # A retried turn replaces the connection it made; a pending one (never delivered) is made again.
    replaced = any(c.name == name and (c.created_by_turn == meta.turn_id or c.pending) for c in existing)
    if len(existing) >= MAX_CONNECTIONS and not replaced:
        return f"You have {MAX_CONNECTIONS} tokens already; revoke one first (/connect revoke <name>)."
    try:
        store.create(
            Connection(
                user_id=meta.user_id,
                chat_id=meta.chat_id,
                name=name,
                created_at=meta.created_at,
                created_by_turn=meta.turn_id,
            )
        )
    except NameTaken:
        return f"You have a token named “{name}” already. Pick another name, or revoke it first."
    url, token = services.settings.deployment.mcp_url, TOKEN_SLOT
    # Code spans and a code block: shown verbatim (no Markdown formatting) and easy to copy.
    shown = (
        f"Your token `{name}` (shown this once; I keep only a fingerprint of it):\n\n`{token}`\n\n"
        f"Endpoint: `{url}`\n\nFor example, with Claude Code:\n\n```\n"
        f'claude mcp add --transport http stepwise {url} --header "Authorization: Bearer {token}"\n```\n\n'
        "It acts as you. Changes that cannot be undone still wait for your Approve here. "
        f"End it with `/connect revoke {name}`."
    )
    kept = f"(A token named “{name}” for the MCP endpoint was made and shown here once.)"
    return ShownOnce(text=shown, kept=kept, connection=name, seed=new_seed())


def _listing(connections: list[Connection], url: str) -> str:
    if not connections:
        return f"You have no tokens. {USAGE}\nEndpoint: {url}"
    lines = [
        f"- `{c.name}` (never delivered: /connect {c.name} makes it again)"
        if c.pending
        else f"- `{c.name}` (since {c.created_at[:10]})"
        for c in connections
    ]
    return f"Your MCP tokens ({len(connections)}), endpoint {url}:\n" + "\n".join(lines) + f"\n\n{USAGE}"
