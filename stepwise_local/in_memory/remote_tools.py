"""In-memory stand-ins for the outside MCP servers' cache and for the servers themselves (unit tests)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from stepwise.remote_tools.client import Connection, RemoteCallError
from stepwise.remote_tools.state import ServerRecord


class InMemoryRemoteToolCache:
    """RemoteToolCache in a dict keyed by server name (always consistent); `reads` notes each `get_many` as
    (servers, consistent)."""

    def __init__(self) -> None:
        self.records: dict[str, ServerRecord] = {}
        self.reads: list[tuple[tuple[str, ...], bool]] = []

    def get_many(self, servers: Sequence[str], *, consistent: bool = False) -> dict[str, ServerRecord]:
        self.reads.append((tuple(servers), consistent))
        return {name: self.records[name] for name in servers if name in self.records}

    def put_tools(
        self,
        server: str,
        config_hash: str,
        tools_json: str,
        fetched_at: int,
        labels_json: str = "",
        *,
        accepted: bool = False,
    ) -> ServerRecord:
        before = self.records.get(server)
        pinned = labels_json if accepted or before is None or not before.pinned_json else before.pinned_json
        record = ServerRecord(
            server=server,
            config_hash=config_hash,
            tools_json=tools_json,
            fetched_at=fetched_at,
            pinned_json=pinned,
            noticed_json=before.noticed_json if before is not None else "[]",
        )
        self.records[server] = record
        return record

    def note_changes(self, server: str, seen_json: str, noticed_json: str) -> bool:
        record = self.records.get(server) or ServerRecord(server=server)
        if record.noticed_json != seen_json:
            return False
        self.records[server] = record.model_copy(update={"noticed_json": noticed_json})
        return True

    def record_failure(self, server: str, now: int, threshold: int, skip_seconds: int) -> ServerRecord:
        record = self.records.get(server) or ServerRecord(server=server)
        failures = record.failures + 1
        skipped_until = now + skip_seconds if failures >= threshold else record.skipped_until
        self.records[server] = record.model_copy(
            update={"failures": failures, "skipped_until": skipped_until}
        )
        return self.records[server]

    def record_success(self, server: str) -> None:
        if server in self.records:
            self.records[server] = self.records[server].model_copy(update={"failures": 0, "skipped_until": 0})


@dataclass
class FakeRemoteServers:
    """RemoteServers answering from `listings` (server name -> tools) and `answer` (server, tool, arguments ->
    a CallToolResult in MCP JSON, or a RemoteCallError to raise); `requests` notes each (server, method)."""

    listings: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    answer: Callable[[str, str, dict[str, Any]], dict[str, Any] | RemoteCallError] = (
        lambda server, tool, args: {"content": [{"type": "text", "text": f"{tool} ran"}]}
    )
    requests: list[tuple[str, str]] = field(default_factory=list)

    def list_tools(self, connection: Connection) -> list[dict[str, Any]]:
        self.requests.append((connection.name, "tools/list"))
        listing = self.listings.get(connection.name)
        if listing is None:
            raise RemoteCallError("the server could not be reached (connection failed)")
        return listing

    def call_tool(
        self, connection: Connection, tool: str, arguments: dict[str, Any], listing: Sequence[dict[str, Any]]
    ) -> dict[str, Any]:
        self.requests.append((connection.name, "tools/call"))
        answer = self.answer(connection.name, tool, arguments)
        if isinstance(answer, RemoteCallError):
            raise answer
        return answer
