"""HTTP without sockets for the in-memory stack: a urllib3 pool that hands each request to the fake Bot API,
the fake Messages API or the fake speech-to-text API in this process, and gives their answer back as urllib3
reads one from a socket (`scripted_http.Canned`: real HTTP/1.1 bytes, streams chunk by chunk). The core's own
clients (BotApiClient, MessagesApiModel, OpenAICompatibleTranscriber) run over it unchanged, so the fakes
check what they send as they do over HTTP."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlsplit

import urllib3

from stepwise.aws.http_transport import HttpTransport
from stepwise_local.anthropic_server import FakeAnthropic, scripted_stream
from stepwise_local.fake_speech import ENDPOINT, FakeSpeechToText
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


class SpeechApiPool:
    """Answers as the fake speech-to-text server would (its `handle`; 404 off its one endpoint). Its
    `slow_next` would sleep here and time nothing out: a late answer is the emulated stack's to test."""

    def __init__(self, api: FakeSpeechToText) -> None:
        self.api = api

    def urlopen(self, method: str, url: str, redirect: bool = True, **kw: Any) -> urllib3.BaseHTTPResponse:
        if method != "POST" or urlsplit(url).path.rstrip("/") != ENDPOINT:
            answer = Canned(404, _json({"error": {"message": "Invalid URL"}}), dict(JSON))
        else:
            headers = {k: str(v) for k, v in (kw.get("headers") or {}).items()}
            status, extra, body = self.api.handle(headers, bytes(kw.get("body") or b""))
            answer = Canned(status, body, extra)
        return answer.response(method, url, kw.get("preload_content", True))

    def transport(self) -> HttpTransport:
        return HttpTransport(self)


def _json(body: dict[str, Any]) -> bytes:
    return json.dumps(body).encode()
