"""The outside servers' tools as registry Tools, from the cached lists (refreshed where allowed).

CallModel builds the model's tool list from the cache (no SDK import) and refreshes a server's list when it is
stale, its entry changed, or it was never fetched, unless the server's breaker is open; a failed refresh keeps
serving the list it had. RunTools only reads the cache: the tools it can run are those the model was offered,
since CallModel writes each list it fetches to the table before offering its tools. A container keeps what it
read for `MEMO_SECONDS`, so RunTools may hold an older read than the offer (a warm-up's, made before CallModel
fetched a new server's list or a list with a new tool): when the model calls a tool that read lacks, RunTools
reads again (`reread`) before it answers "Unknown tool".

An OAuth server's tools are a person's own (`for_person`): offered only to a person with an account there,
listed with their access token into a record of their own (`<server>#<user id>`), and called with it.
"""

from __future__ import annotations

import json
import logging
from time import monotonic
from typing import TYPE_CHECKING, Any

from stepwise.remote_tools.calls import RemoteTool, RemoteToolCaller, record_key
from stepwise.remote_tools.client import RemoteCallError
from stepwise.remote_tools.config import TOOL_NAME
from stepwise.remote_tools.labels import canonical_labels, label_changes, labels_hash, labels_of
from stepwise.remote_tools.state import canonical_tools
from stepwise.tools.registry import AnyArguments, Tool

if TYPE_CHECKING:
    from collections.abc import Callable

    from stepwise.remote_tools.config import ServerEntry
    from stepwise.remote_tools.labels import Labels
    from stepwise.remote_tools.state import ServerRecord

logger = logging.getLogger(__name__)

MEMO_SECONDS = 20.0  # a warm container reads the servers' records again after this long
MAX_DESCRIPTION = 1000


class RemoteTools:
    """The tools of the configured servers, sorted by name; `refresh` lets stale lists be fetched again.
    `fresh_servers` reads the servers list past its cache (for `reread`; default: `servers`)."""

    def __init__(
        self,
        servers: Callable[[], tuple[ServerEntry, ...]],
        caller: RemoteToolCaller,
        *,
        refresh: bool,
        memo_seconds: float = MEMO_SECONDS,
        fresh_servers: Callable[[], tuple[ServerEntry, ...]] | None = None,
    ) -> None:
        self._servers = servers
        self._fresh_servers = fresh_servers or servers
        self._caller = caller
        self._refresh = refresh
        self._memo_seconds = memo_seconds
        self._memo: tuple[float, list[Tool[Any]]] | None = None
        # Each person's own tools, with the servers they were read for (a changed set reads them again).
        self._personal: dict[int, tuple[float, tuple[str, ...], list[Tool[Any]]]] = {}

    def tools(self) -> list[Tool[Any]]:
        """The tools (the same list object while nothing was read again, so a registry can be reused)."""
        if self._memo is not None and monotonic() - self._memo[0] < self._memo_seconds:
            return self._memo[1]
        tools = self._build()
        self._memo = (monotonic(), tools)
        return tools

    def reread(self) -> list[Tool[Any]]:
        """The tools read again now, past the memo and the servers list's cache, the records read strongly
        consistent: every list CallModel offered before this call is seen (kept as the memo)."""
        tools = self._build(fresh=True)
        self._memo = (monotonic(), tools)
        self._personal.clear()
        return tools

    def for_person(self, user_id: int) -> list[Tool[Any]]:
        """The person's own tools: those of the OAuth servers they have an account at, each listed with their
        token (the same list object while nothing was read again). No OAuth server listed: no request; else
        their accounts are read (one query: a disconnected server's tools go at once)."""
        accounts = self._caller.accounts
        oauth = [entry for entry in self._servers() if entry.auth == "oauth"]
        if accounts is None or not oauth:
            return []
        connected = accounts.connected(user_id)
        entries = sorted((entry for entry in oauth if entry.name in connected), key=lambda entry: entry.name)
        names = tuple(entry.name for entry in entries)
        memo = self._personal.get(user_id)
        if memo is not None and memo[1] == names and monotonic() - memo[0] < self._memo_seconds:
            return memo[2]
        # Read strongly consistent: RunTools sees the list CallModel just fetched with the person's token.
        tools = self._tools_from(entries, user_id, fresh=True) if entries else []
        self._personal[user_id] = (monotonic(), names, tools)
        return tools

    def _build(self, *, fresh: bool = False) -> list[Tool[Any]]:
        entries = (self._fresh_servers if fresh else self._servers)()
        shared = sorted((entry for entry in entries if entry.auth == "token"), key=lambda entry: entry.name)
        return self._tools_from(shared, None, fresh=fresh) if shared else []

    def _tools_from(self, entries: list[ServerEntry], user_id: int | None, *, fresh: bool) -> list[Tool[Any]]:
        """The tools of these servers' records (one read), stale lists fetched again where allowed."""
        caller = self._caller
        keys = {entry.name: record_key(entry, user_id) for entry in entries}
        records = caller.cache.get_many(list(keys.values()), consistent=fresh)
        caller.known.update(records)
        tools: list[Tool[Any]] = []
        for entry in entries:
            record = records.get(keys[entry.name])
            if self._refresh and self._stale(entry, record):
                record = self._fetch(entry, record, user_id)
            if record is not None:
                tools += self._tools_of(entry, record, user_id)
        return sorted(tools, key=lambda tool: tool.name)

    def _stale(self, entry: ServerEntry, record: ServerRecord | None) -> bool:
        now = self._caller.now()
        if record is None:
            return True
        if record.skipped(now):
            return False
        return (
            record.config_hash != entry.fingerprint()
            or now - record.fetched_at >= self._caller.limits.refresh_seconds
        )

    def _fetch(
        self, entry: ServerEntry, record: ServerRecord | None, user_id: int | None = None
    ) -> ServerRecord | None:
        """The server's list fetched again (`tools/list`; a person's with their token, refreshed once when the
        server refuses it); on failure the record it had (failure counted)."""
        caller = self._caller
        key = record_key(entry, user_id)
        whose = "" if user_id is None else f" (user {user_id}'s account)"
        try:
            listed = self._list(entry, user_id)
        except RemoteCallError as error:
            logger.warning(
                f"MCP server {entry.name}{whose}: tools/list failed ({error}); "
                + ("serving the list it had" if record else "its tools are not offered")
            )
            caller.failed(key, error)
            return record
        for tool in listed:
            name = str(tool.get("name", ""))
            if not TOOL_NAME.match(entry.tool_name(name)):
                logger.warning(
                    f"MCP server {entry.name}: tool {name!r} skipped: "
                    f"{entry.tool_name(name)!r} is not a valid tool name"
                )
        labels = labels_of(listed)
        pinned = record.pinned() if record is not None else None
        accepted = pinned is not None and pinned != labels and entry.accept_labels == labels_hash(labels)
        if accepted:
            logger.warning(
                f"MCP server {entry.name}: the owner accepted its tools' labels ({entry.accept_labels})"
            )
        fresh = caller.cache.put_tools(
            key,
            entry.fingerprint(),
            canonical_tools(listed),
            caller.now(),
            canonical_labels(labels),
            accepted=accepted,
        )
        caller.known[key] = fresh
        self._log_changes(entry, fresh, labels)
        return fresh

    def _list(self, entry: ServerEntry, user_id: int | None) -> list[dict[str, Any]]:
        caller = self._caller
        try:
            return caller.servers().list_tools(caller.connection(entry, user_id))
        except RemoteCallError as error:
            if not (error.unauthorized and user_id is not None):
                raise
        return caller.servers().list_tools(caller.connection(entry, user_id, renewed=True))

    def _log_changes(self, entry: ServerEntry, record: ServerRecord, labels: Labels) -> None:
        """Log each label change of an offered tool once (across containers: the record keeps what was
        logged), with how the owner accepts them."""
        pinned = record.pinned() or labels
        changes = label_changes(pinned, labels, [name for name in labels if entry.offers(name)])
        noticed = record.noticed()
        if changes == noticed:
            return
        if not self._caller.cache.note_changes(record.server, record.noticed_json, json.dumps(changes)):
            return  # another container logged them
        accept = (
            "the first-seen labels stand (a new tool asks for approval) until the owner accepts the current "
            f'ones: add "accept_labels": "{labels_hash(labels)}" to the server\'s entry in the servers list'
        )
        for change in changes:
            if change not in noticed:
                logger.warning(f"MCP server {entry.name}: {change}; {accept}")

    def _tools_of(self, entry: ServerEntry, record: ServerRecord, user_id: int | None) -> list[Tool[Any]]:
        listing = record.tools()
        pinned = record.pinned()
        tools = []
        for spec in listing:
            name = str(spec.get("name", ""))
            if not entry.offers(name):
                continue
            annotations = _annotations(spec)
            # Not pinned yet (a record from before pinning): its labels are taken as first seen.
            first_seen = annotations if pinned is None else pinned.get(name)
            remote = RemoteTool(entry, name, annotations, tuple(listing), first_seen, user_id)
            tools.append(self._tool(remote, spec))
        return tools

    def _tool(self, remote: RemoteTool, spec: dict[str, Any]) -> Tool[Any]:
        schema = spec.get("inputSchema")
        description = str(spec.get("description") or "").strip()[:MAX_DESCRIPTION]
        caller = self._caller
        return Tool(
            name=remote.entry.tool_name(remote.tool),
            description=f"[Tool of the outside MCP server “{remote.entry.name}”] {description}".strip(),
            input_model=AnyArguments,
            schema=schema if isinstance(schema, dict) else {"type": "object"},
            run=lambda context, args: caller.call(remote, context, args),
            needs_approval=remote.needs_approval,
            describe=lambda _context, args, room: caller.describe(remote, args, room),
            writes=True,
            destructive=remote.needs_approval or remote.destructive,
            idempotent=remote.idempotent,
            open_world=True,
        )


def _annotations(spec: dict[str, Any]) -> dict[str, Any]:
    annotations = spec.get("annotations")
    return dict(annotations) if isinstance(annotations, dict) else {}
