"""Reaching the in-memory stack's `/mcp` endpoint and Mini App from a behaviour test, as support.mcp_client
and support.miniapp reach the emulated stack's over HTTP: the official MCP SDK's client over an httpx
transport that hands each request to `MemoryStack.mcp_request`, and the page's API through
`MemoryStack.app_request`. Answers are `httpx2.Response`s (`status_code`, `headers`, `text`, `json()`), read
as the integration tests read `requests`' responses."""

from __future__ import annotations

import base64
import json
from typing import TYPE_CHECKING, Any

import anyio
import anyio.to_thread
import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from stepwise_local import web_app
from support.mcp_client import TOKEN
from support.memory_stack import BOT_TOKEN, MemoryStack

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from mcp.types import CallToolResult


def connect(stack: MemoryStack, user: int, name: str = "laptop") -> str:
    """`/connect <name>` in the user's chat; the token the reply shows."""
    stack.say(user, f"/connect {name}")
    found = TOKEN.findall(stack.replies(user)[-1])
    assert len(found) == 2, stack.replies(user)[-1]  # the token, and again in the example command
    return str(found[0])


def response(proxy: dict[str, Any], request: httpx2.Request | None = None) -> httpx2.Response:
    """API Gateway's proxy response as the HTTP answer the client reads."""
    payload = proxy.get("body") or ""
    data = base64.b64decode(payload) if proxy.get("isBase64Encoded") else payload.encode()
    headers = {
        name: value
        for name, value in (proxy.get("headers") or {}).items()
        if name.lower() not in ("content-length", "transfer-encoding", "connection")
    }
    return httpx2.Response(int(proxy.get("statusCode", 200)), headers=headers, content=data, request=request)


def mcp_transport(stack: MemoryStack) -> httpx2.MockTransport:
    """An httpx transport that answers with the stack's McpFunction (run off the event loop: Mangum runs
    one of its own, as in Lambda)."""

    async def handle(request: httpx2.Request) -> httpx2.Response:
        body = await request.aread()
        headers = dict(request.headers.items())
        proxy = await anyio.to_thread.run_sync(stack.mcp_request, request.method, headers, body)
        return response(proxy, request)

    return httpx2.MockTransport(handle)


def with_client[T](
    stack: MemoryStack, token: str, session: Callable[[Client], Awaitable[T]], mode: str = "legacy"
) -> T:
    """`session(client)` with the SDK's client connected to the stack's `/mcp` with the bearer token; then
    the turns it queued run (an outside call waiting for the tap)."""

    async def connected() -> T:
        headers = {"Authorization": f"Bearer {token}"}
        async with (
            httpx2.AsyncClient(headers=headers, timeout=30, transport=mcp_transport(stack)) as http,
            Client(streamable_http_client(stack.settings.mcp_url, http_client=http), mode=mode) as client,
        ):
            return await session(client)

    result = anyio.run(connected)
    stack.drain()
    return result


def call(
    stack: MemoryStack, token: str, name: str, arguments: dict[str, Any], mode: str = "legacy"
) -> CallToolResult:
    """One tools/call through the SDK's client."""

    async def session(client: Client) -> CallToolResult:
        return await client.call_tool(name, arguments)

    return with_client(stack, token, session, mode)


def post(
    stack: MemoryStack, body: Any, token: str | None, method: str = "POST", **headers: str
) -> httpx2.Response:
    """A raw request to `/mcp` (JSON unless `body` is text or bytes), with the bearer token unless None."""
    sent = {"content-type": "application/json", "accept": "application/json, text/event-stream", **headers}
    if token is not None:
        sent["authorization"] = f"Bearer {token}"
    data = body if isinstance(body, (str, bytes)) else json.dumps(body)
    answer = response(stack.mcp_request(method, sent, data))
    stack.drain()
    return answer


def init_data(user_id: int, **signed: Any) -> str:
    """Telegram.WebApp.initData for `user_id`, signed with the stack's bot token unless `bot_token` is given
    (see support.miniapp.init_data)."""
    return web_app.init_data(user_id, signed.pop("bot_token", BOT_TOKEN), **signed)


def app(
    stack: MemoryStack, method: str, path: str, headers: dict[str, str] | None = None, body: Any = b""
) -> httpx2.Response:
    """One request to the Mini App (`path` under /app), then the turns it queued run."""
    data = body if isinstance(body, (str, bytes)) else json.dumps(body)
    answer = response(stack.app_request(method, path, headers or {}, data))
    stack.drain()
    return answer


def state(stack: MemoryStack, data: str | None) -> httpx2.Response:
    headers = {"Authorization": f"tma {data}"} if data is not None else {}
    return app(stack, "GET", "/app/api/state", headers)


def act(stack: MemoryStack, data: str | None, action: str, target: Any, request_id: str) -> httpx2.Response:
    headers = {"Authorization": f"tma {data}"} if data is not None else {}
    headers["Content-Type"] = "application/json"
    body = {"action": action, "target": target, "request_id": request_id}
    return app(stack, "POST", "/app/api/action", headers, body)
