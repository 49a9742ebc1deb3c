"""The emulated HTTP API's `/mcp` and `/app` routes on 127.0.0.1: each HTTP request becomes the API Gateway
(payload 2.0) event the function of its route gets in AWS (McpFunction, AppFunction), and its proxy response
the HTTP answer. `make chat` serves them so that an MCP client on the same machine can connect with a token
from /connect, and a browser can open the Mini App; the tests connect the SDK's client and a headless
Chromium. With `telegram_stand_in` (make chat) the server also plays Telegram's part for the page: it serves
the stand-in for `telegram-web-app.js` and points the page at it (`stepwise_local.web_app`)."""

from __future__ import annotations

import base64
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, urlsplit

from stepwise_local.emulation import http_api_event
from stepwise_local.web_app import STAND_IN_PATH, STAND_IN_SCRIPT, with_stand_in

if TYPE_CHECKING:
    from stepwise_local.emulation import Emulation

PATH = "/mcp"
APP_PATH = "/app"
CALLBACK_PATH = "/oauth/callback"  # where people's browsers come back from an OAuth server's sign-in
JSON = {"content-type": "application/json"}
_HOST = re.compile(r"^[A-Za-z0-9.-]+(:\d{1,5})?$")  # a Host header fit to name the stand-in's URL


class LocalMcpEndpoint:
    """`with LocalMcpEndpoint(emulation) as endpoint:` serves `endpoint.url` and points /connect at it."""

    def __init__(
        self, emulation: Emulation, port: int = 0, host: str = "127.0.0.1", *, telegram_stand_in: bool = False
    ) -> None:
        self.emulation = emulation
        self.telegram_stand_in = telegram_stand_in
        self.function = emulation.template.function_for_route(PATH)
        self._server = ThreadingHTTPServer((host, port), _handler_for(self))
        self._server.daemon_threads = True
        # serve_forever looks for shutdown() every 0.05 s (0.5 by default: stopping would wait that long)
        self._thread = threading.Thread(
            target=self._server.serve_forever, args=(0.05,), name="local-mcp", daemon=True
        )

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}{PATH}"

    @property
    def app_url(self) -> str:
        """The Mini App's page on the same server."""
        return self.url.removesuffix(PATH) + APP_PATH

    @property
    def callback_url(self) -> str:
        """The sign-ins' callback on the same server (OAUTH_CALLBACK_URL)."""
        return self.url.removesuffix(PATH) + CALLBACK_PATH

    def __enter__(self) -> LocalMcpEndpoint:
        self._thread.start()
        self.emulation.config.env["MCP_URL"] = self.url
        self.emulation.config.env["APP_URL"] = self.app_url
        self.emulation.config.env["OAUTH_CALLBACK_URL"] = self.callback_url
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def answer(self, method: str, path: str, headers: dict[str, str], body: bytes) -> dict[str, Any]:
        """The function's proxy response to one request (404 off the routes, as API Gateway answers)."""
        route = urlsplit(path).path
        lower = {k.lower(): v for k, v in headers.items()}
        if route == CALLBACK_PATH and method == "GET":
            return self._callback(urlsplit(path).query)
        if self.telegram_stand_in and route == STAND_IN_PATH:
            return {
                "statusCode": 200,
                "headers": {"content-type": "text/javascript; charset=utf-8", "cache-control": "no-cache"},
                "body": STAND_IN_SCRIPT,
            }
        try:
            function = self.function if route == PATH else self.emulation.template.function_for_route(route)
        except LookupError:
            return {
                "statusCode": 404,
                "headers": {"content-type": "application/json"},
                "body": '{"message":"Not Found"}',
            }
        text = body.decode("utf-8", errors="replace")
        event = http_api_event(text, lower, route, method)
        try:
            response: dict[str, Any] = self.emulation.invoke(function, event)
        except Exception:  # the function failed: API Gateway answers 500 for it
            return {"statusCode": 500, "headers": JSON, "body": '{"message":"Internal Server Error"}'}
        if self.telegram_stand_in and route == APP_PATH:
            return with_stand_in(response, self._origin(lower.get("host", "")) + STAND_IN_PATH)
        return response

    def _callback(self, query: str) -> dict[str, Any]:
        """A sign-in's callback: the route's function (OAuthCallbackFunction), as API Gateway calls it."""
        function = self.emulation.template.function_for_route(CALLBACK_PATH)
        event = http_api_event("", {}, CALLBACK_PATH, "GET")
        event["rawQueryString"] = query
        params = dict(parse_qsl(query))
        if params:
            event["queryStringParameters"] = params
        try:
            response: dict[str, Any] = self.emulation.invoke(function, event)
        except Exception:  # the function failed: API Gateway answers 500 for it
            return {"statusCode": 500, "headers": JSON, "body": '{"message":"Internal Server Error"}'}
        return response

    def _origin(self, host: str) -> str:
        """This server as the browser reached it (its Host header, when it is a plain host name)."""
        if not _HOST.match(host):
            address, port = self._server.server_address[:2]
            host = f"{address!s}:{port}"
        return f"http://{host}"


def _handler_for(endpoint: LocalMcpEndpoint) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def _serve(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            body = self.rfile.read(length) if length else b""
            response = endpoint.answer(self.command, self.path, dict(self.headers.items()), body)
            payload = response.get("body") or ""
            data = base64.b64decode(payload) if response.get("isBase64Encoded") else payload.encode()
            self.send_response(int(response.get("statusCode", 200)))
            for name, value in (response.get("headers") or {}).items():
                if name.lower() not in ("content-length", "transfer-encoding", "connection"):
                    self.send_header(name, value)
            for cookie in response.get("cookies") or []:
                self.send_header("set-cookie", cookie)
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_POST = do_GET = do_DELETE = do_PUT = do_OPTIONS = _serve

        def log_message(self, format: str, *args: Any) -> None:
            return  # quiet: the function's own log says what happened

    return Handler
