"""The port to outside MCP servers (the SDK adapter is `stepwise.remote_tools.mcp_client`, imported only when
a server must be reached: `import mcp` costs about four times `import boto3`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from collections.abc import Sequence


@dataclass(frozen=True)
class Connection:
    """How to reach one server: its URL, the headers that authenticate (never logged) and the time allowed."""

    name: str
    url: str
    timeout_seconds: float
    headers: dict[str, str] = field(default_factory=dict, repr=False)


class RemoteCallError(Exception):
    """The server could not be asked or did not answer properly. `may_have_run`: the request may have reached
    the server (a timeout after sending), so a call's outcome is unknown; `counts`: a failure of the server
    (unreachable, timed out, HTTP errors), which the circuit breaker counts; a JSON-RPC error answer does
    not; `unauthorized`: the server answered 401 (the token was refused before anything ran: a person's
    account's token is refreshed and the request sent once more)."""

    def __init__(
        self, message: str, *, may_have_run: bool = False, counts: bool = True, unauthorized: bool = False
    ) -> None:
        super().__init__(message)
        self.may_have_run = may_have_run
        self.counts = counts
        self.unauthorized = unauthorized


class RemoteServers(Protocol):
    """Talks MCP to outside servers; every failure is a RemoteCallError."""

    def list_tools(self, connection: Connection) -> list[dict[str, Any]]:
        """The server's `tools/list`, every page, as MCP JSON (`name`, `description`, `inputSchema`...)."""
        ...

    def call_tool(
        self, connection: Connection, tool: str, arguments: dict[str, Any], listing: Sequence[dict[str, Any]]
    ) -> dict[str, Any]:
        """One `tools/call`; the CallToolResult as MCP JSON (`content`, `structuredContent`, `isError`).
        `listing` is the cached `tools/list`, which the client may use instead of listing again."""
        ...
