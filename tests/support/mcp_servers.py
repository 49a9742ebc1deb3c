"""Outside MCP servers for the tests: the MCP project's reference time server (`mcp-server-time`, installed
from the package index) served over Streamable HTTP on 127.0.0.1, and a server that accepts connections and
never answers."""

from __future__ import annotations

import json
import socket
import threading
import time
from typing import Any

import uvicorn
from mcp_server_time.server import create_server


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class TimeServer:
    """`with TimeServer() as server:` mcp-server-time at `server.url`; `methods` lists the JSON-RPC methods
    of the requests it received, in order. With `token`, requests without `Authorization: Bearer <token>` get
    401."""

    def __init__(self, token: str | None = None) -> None:
        self.token = token
        self.methods: list[str] = []
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        self._app = create_server("Europe/Lisbon").streamable_http_app()
        config = uvicorn.Config(
            self._recording, host="127.0.0.1", port=self.port, log_level="warning", interface="asgi3"
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, name="mcp-time-server", daemon=True)

    def count(self, method: str) -> int:
        return self.methods.count(method)

    async def _recording(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        messages = []
        body = b""
        while True:
            message = await receive()
            messages.append(message)
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        try:
            self.methods.append(str(json.loads(body).get("method")))
        except ValueError:
            self.methods.append(scope["method"])
        headers = dict(scope.get("headers") or [])
        if self.token and headers.get(b"authorization") != f"Bearer {self.token}".encode():
            await send({"type": "http.response.start", "status": 401, "headers": []})
            await send({"type": "http.response.body", "body": b"unauthorized"})
            return
        replay = iter(messages)

        async def replayed() -> Any:
            return next(replay, None) or await receive()

        await self._app(scope, replayed, send)

    def __enter__(self) -> TimeServer:
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started:
            if time.monotonic() > deadline:
                raise TimeoutError("the MCP time server did not start")
            time.sleep(0.01)
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=10)


class SilentServer:
    """Accepts connections on 127.0.0.1 and never answers; `connections` counts them."""

    def __init__(self) -> None:
        self._socket = socket.socket()
        self._socket.bind(("127.0.0.1", 0))
        self._socket.listen(50)
        self.url = f"http://127.0.0.1:{self._socket.getsockname()[1]}/mcp"
        self.connections = 0
        self._held: list[socket.socket] = []
        self._thread = threading.Thread(target=self._accept, name="silent-server", daemon=True)

    def _accept(self) -> None:
        while True:
            try:
                connection, _ = self._socket.accept()
            except OSError:
                return
            self.connections += 1
            self._held.append(connection)

    def __enter__(self) -> SilentServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._socket.close()
        for connection in self._held:
            connection.close()
