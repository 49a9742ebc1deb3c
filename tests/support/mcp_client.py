"""Reaching the emulated stack's /mcp endpoint from a test: a token from /connect, the official SDK's client
over Streamable HTTP, and plain HTTP requests for what the SDK would never send."""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

import anyio
import httpx2
import requests
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from mcp.types import CallToolResult

    from support.stack import Stack

TOKEN = re.compile(r"swp_[0-9a-f]{64}")
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    },
}


def connect(stack: Stack, user: int, name: str = "laptop") -> str:
    """`/connect <name>` in the user's chat; the token the reply shows."""
    stack.say(user, f"/connect {name}")
    found = TOKEN.findall(stack.replies(user)[-1])
    assert len(found) == 2, stack.replies(user)[-1]  # the token, and again in the example command
    return str(found[0])


def with_client[T](
    url: str, token: str, session: Callable[[Client], Awaitable[T]], mode: str = "legacy"
) -> T:
    """`session(client)` with the SDK's client connected over Streamable HTTP with the bearer token."""

    async def connected() -> T:
        headers = {"Authorization": f"Bearer {token}"}
        async with (
            httpx2.AsyncClient(headers=headers, timeout=30) as http,
            Client(streamable_http_client(url, http_client=http), mode=mode) as client,
        ):
            return await session(client)

    return anyio.run(connected)


def call(url: str, token: str, name: str, arguments: dict[str, Any], mode: str = "legacy") -> CallToolResult:
    """One tools/call through the SDK's client."""

    async def session(client: Client) -> CallToolResult:
        return await client.call_tool(name, arguments)

    return with_client(url, token, session, mode)


def text(result: CallToolResult) -> str:
    return "\n".join(getattr(block, "text", "") for block in result.content)


def post(url: str, body: Any, token: str | None, **headers: str) -> requests.Response:
    """A raw POST (JSON unless `body` is text or bytes), with the bearer token unless None."""
    sent = {"content-type": "application/json", "accept": "application/json, text/event-stream", **headers}
    if token is not None:
        sent["authorization"] = f"Bearer {token}"
    data = body if isinstance(body, (str, bytes)) else json.dumps(body)
    return requests.post(url, data=data, headers=sent, timeout=30)
