"""Outside MCP servers through the official SDK's client over Streamable HTTP.

Imported only when a server must be reached (a stale tool list refreshed, a tool called): the SDK costs about
four times `import boto3`, which a turn of built-in tools never pays. Each request opens one client session
(the SDK probes the 2026-07-28 protocol, then falls back to the `initialize` handshake), bounded by the
connection's timeout as a whole; every failure becomes a RemoteCallError (one flagged `unauthorized` when
the server answered 401: the SDK reports that as an internal error, so the HTTP answers are watched).
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

import anyio
import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp_types import ListToolsResult

from stepwise.remote_tools.client import Connection, RemoteCallError

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Sequence

MAX_PAGES = 20  # a server whose tools/list never ends is cut off here
CONNECT_SECONDS = 5.0
UNAUTHORIZED = 401
REFUSALS = frozenset({-32600, -32601, -32602})  # JSON-RPC: invalid request, method not found, invalid params


class McpHttpServers:
    """RemoteServers with `mcp.Client` on `streamable_http_client`."""

    def list_tools(self, connection: Connection) -> list[dict[str, Any]]:
        async def listing(client: Client) -> list[dict[str, Any]]:
            tools: list[dict[str, Any]] = []
            cursor: str | None = None
            for _ in range(MAX_PAGES):
                page = await client.list_tools(cursor=cursor)
                tools += [
                    tool.model_dump(mode="json", by_alias=True, exclude_none=True) for tool in page.tools
                ]
                cursor = page.next_cursor
                if cursor is None:
                    break
            return tools

        return _run(connection, listing, sends_call=False)

    def call_tool(
        self, connection: Connection, tool: str, arguments: dict[str, Any], listing: Sequence[dict[str, Any]]
    ) -> dict[str, Any]:
        async def call(client: Client) -> dict[str, Any]:
            _know_listing(client, listing)
            result = await client.call_tool(tool, arguments)
            return result.model_dump(mode="json", by_alias=True, exclude_none=True)

        return _run(connection, call, sends_call=True)


def _know_listing(client: Client, listing: Sequence[dict[str, Any]]) -> None:
    """Give the session the cached tool list, so that checking a result against the tool's output schema
    does not cost another `tools/list` per call (the SDK lists again by itself when it has none)."""
    absorb = getattr(client.session, "_absorb_tool_listing", None)
    if absorb is None or not listing:
        return
    try:
        absorb(ListToolsResult.model_validate({"tools": list(listing)}), complete=True)
    except Exception:  # a listing the SDK cannot read: it lists again itself
        return


def _run[T](connection: Connection, work: Callable[[Client], Awaitable[T]], *, sends_call: bool) -> T:
    statuses: set[int] = set()  # the HTTP statuses the server answered with
    try:
        return asyncio.run(_session(connection, work, statuses))
    except RemoteCallError:
        raise
    except BaseException as error:  # every failure of the exchange becomes one error
        if isinstance(error, KeyboardInterrupt | SystemExit):
            raise
        if UNAUTHORIZED in statuses:  # the token was refused: nothing ran
            raise RemoteCallError(
                "HTTP 401 from the server (the token was refused)", counts=False, unauthorized=True
            ) from None
        raise _explain(error, connection, sends_call) from error


async def _session[T](
    connection: Connection, work: Callable[[Client], Awaitable[T]], statuses: set[int]
) -> T:
    timeout = httpx2.Timeout(
        connection.timeout_seconds, connect=min(CONNECT_SECONDS, connection.timeout_seconds)
    )

    async def note(response: httpx2.Response) -> None:
        statuses.add(response.status_code)

    hooks = {"response": [note]}
    with anyio.fail_after(connection.timeout_seconds):
        async with httpx2.AsyncClient(headers=connection.headers, timeout=timeout, event_hooks=hooks) as http:
            transport = streamable_http_client(connection.url, http_client=http)
            async with Client(
                transport, read_timeout_seconds=connection.timeout_seconds, cache=None
            ) as client:
                return await work(client)


def _leaves(error: BaseException) -> list[BaseException]:
    """The errors inside exception groups (the SDK's task groups wrap what went wrong)."""
    if isinstance(error, BaseExceptionGroup):
        return [leaf for inner in error.exceptions for leaf in _leaves(inner)]
    return [error]


def _explain(error: BaseException, connection: Connection, sends_call: bool) -> RemoteCallError:
    """One short sentence for the model and the log; never the headers."""
    leaves = _leaves(error)
    for leaf in leaves:
        if isinstance(leaf, MCPError):
            # The server understood and refused (bad request, unknown method or tool, invalid arguments):
            # it is up. Anything else (an internal error, or an HTTP error the SDK reports as one) counts.
            return RemoteCallError(
                f"the server answered with an error: {leaf.error.message} (code {leaf.error.code})",
                counts=leaf.error.code not in REFUSALS,
            )
    for leaf in leaves:
        if isinstance(leaf, TimeoutError | httpx2.TimeoutException):
            return RemoteCallError(
                f"no answer within {connection.timeout_seconds:g} s", may_have_run=sends_call, counts=True
            )
    for leaf in leaves:
        if isinstance(leaf, httpx2.HTTPStatusError):
            return RemoteCallError(f"HTTP {leaf.response.status_code} from the server", counts=True)
        if isinstance(leaf, httpx2.ConnectError):
            return RemoteCallError("the server could not be reached (connection failed)", counts=True)
    first = leaves[0] if leaves else error
    return RemoteCallError(
        f"the exchange failed ({type(first).__name__}: {str(first)[:200]})",
        may_have_run=sends_call,
        counts=True,
    )
