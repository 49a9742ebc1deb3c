"""HTTP without sockets for the in-memory stack: a urllib3 pool that hands each request to the fake Bot API
or the fake Messages API in this process, and gives their answer back as urllib3 reads one from a socket
(`scripted_http.Canned`: real HTTP/1.1 bytes, streams chunk by chunk). The core's own clients (BotApiClient,
MessagesApiModel) run over it unchanged, so the fakes check what they send as they do over HTTP."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlsplit

import urllib3

from stepwise.aws.http_transport import HttpTransport
from stepwise_local.anthropic_server import FakeAnthropic, scripted_stream
from stepwise_local.telegram_server import FakeBotApi
from support.scripted_http import Canned

JSON = {"Content-Type": "application/json"}


class BotApiPool:
    """Answers as the fake Bot API's HTTP server would (its `answer`)."""

    def __init__(self, api: FakeBotApi) -> None:
        self.api = api

    def urlopen(self, method: str, url: str, redirect: bool = True, **kw: Any) -> urllib3.BaseHTTPResponse:
        parts = urlsplit(url)
        path = parts.path + (f"?{parts.query}" if parts.query else "")
        headers = urllib3.HTTPHeaderDict(kw.get("headers") or {})
        status, body = self.api.answer(method, path, headers.get("Content-Type"), kw.get("body") or b"")
        if isinstance(body, bytes):
            answer = Canned(status, body, {"Content-Type": "application/octet-stream"})
        else:
            answer = Canned(status, _json(body), dict(JSON))
        return answer.response(method, url, kw.get("preload_content", True))

    def transport(self) -> HttpTransport:
        return HttpTransport(self)


class MessagesApiPool:
    """Answers as the fake Messages API's HTTP server would (its `answer`), streams included."""

    def __init__(self, api: FakeAnthropic) -> None:
        self.api = api

    def urlopen(self, method: str, url: str, redirect: bool = True, **kw: Any) -> urllib3.BaseHTTPResponse:
        headers = urllib3.HTTPHeaderDict(kw.get("headers") or {})
        answered = self.api.answer(urlsplit(url).path, headers, kw.get("body") or b"")
        if answered.streamed is None:
            answer = Canned(answered.status, _json(answered.body), {**JSON, **answered.headers})
        else:
            events, drops = scripted_stream(answered.body, answered.streamed)
            answer = Canned(200, headers={"Content-Type": "text/event-stream"}, chunks=events, broken=drops)
        return answer.response(method, url, kw.get("preload_content", True))

    def transport(self) -> HttpTransport:
        return HttpTransport(self)


def _json(body: dict[str, Any]) -> bytes:
    return json.dumps(body).encode()
