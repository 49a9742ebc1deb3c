"""A scripted urllib3 pool for unit tests of the HTTP clients, without sockets: give it to the client as
`ScriptedPool(...).transport()`.

Each scripted answer is written out as the bytes of an HTTP/1.1 response, parsed by http.client and wrapped
by urllib3 as a response read from a socket is (a body framed by Content-Length, or chunked: then a streamed
read gets the chunks one by one, and a chunked body cut short breaks off as a dropped connection does). A
scripted exception (urllib3's own: NewConnectionError, ConnectTimeoutError, ReadTimeoutError, ProtocolError)
is raised instead of answering, as urllib3 raises it with `retries=False`.
"""

from __future__ import annotations

import http.client
import io
import json
import socket
from dataclasses import dataclass, field
from http import HTTPStatus
from typing import Any

import urllib3
from urllib3.connection import HTTPSConnection
from urllib3.connectionpool import HTTPSConnectionPool
from urllib3.exceptions import (
    ConnectTimeoutError,
    NameResolutionError,
    NewConnectionError,
    ProtocolError,
    ReadTimeoutError,
)

from stepwise.aws.http_transport import HttpTransport


@dataclass
class Canned:
    """One answer: status, headers and body; a body in `chunks` is sent chunked, piece by piece, and with
    `broken` the connection drops after the last of them (no final empty chunk)."""

    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    chunks: list[bytes] | None = None
    broken: bool = False

    def wire(self) -> bytes:
        """The answer as the server writes it on the connection."""
        try:
            reason = HTTPStatus(self.status).phrase
        except ValueError:
            reason = "Scripted"
        head = [
            f"HTTP/1.1 {self.status} {reason}",
            *(f"{name}: {value}" for name, value in self.headers.items()),
        ]
        if self.chunks is None:
            head.append(f"Content-Length: {len(self.body)}")
            return "\r\n".join([*head, "", ""]).encode() + self.body
        head.append("Transfer-Encoding: chunked")
        body = b"".join(b"%x\r\n%s\r\n" % (len(chunk), chunk) for chunk in self.chunks if chunk)
        return "\r\n".join([*head, "", ""]).encode() + body + (b"" if self.broken else b"0\r\n\r\n")

    def response(self, method: str, url: str, preload_content: bool) -> urllib3.HTTPResponse:
        """The response urllib3 makes of these bytes, as its connection makes it from a socket."""
        parsed = http.client.HTTPResponse(_Socket(self.wire()), method=method)  # type: ignore[arg-type]
        parsed.begin()
        return urllib3.HTTPResponse(
            body=parsed,
            headers=urllib3.HTTPHeaderDict(parsed.getheaders()),
            status=parsed.status,
            version=parsed.version,
            version_string="HTTP/1.1",
            reason=parsed.reason,
            preload_content=preload_content,
            decode_content=True,
            original_response=parsed,
            request_method=method,
            request_url=url,
        )


class _Socket:
    """What http.client reads a response from."""

    def __init__(self, data: bytes) -> None:
        self._data = data

    def makefile(self, mode: str) -> io.BytesIO:
        return io.BytesIO(self._data)


# (status, body[, headers]), a body that is not bytes sent as JSON; a Canned answer; or an exception to raise.
Answer = tuple[int, Any] | tuple[int, Any, dict[str, str]] | Canned | Exception


@dataclass
class SentRequest:
    """One request as the transport handed it to the pool."""

    method: str
    url: str
    headers: urllib3.HTTPHeaderDict
    body: bytes | None
    timeout: urllib3.Timeout
    options: dict[str, Any]

    def json(self) -> Any:
        return json.loads(self.body or b"{}")


class ScriptedPool:
    """Stands in for `urllib3.PoolManager`: answers requests from a script, in order, and keeps them."""

    def __init__(self, answers: list[Answer]) -> None:
        self.answers = list(answers)
        self.requests: list[SentRequest] = []

    def urlopen(self, method: str, url: str, redirect: bool = True, **kw: Any) -> urllib3.BaseHTTPResponse:
        options = {"redirect": redirect, **{key: kw[key] for key in kw if key not in ("headers", "body")}}
        request = SentRequest(
            method,
            url,
            urllib3.HTTPHeaderDict(kw.get("headers") or {}),
            kw.get("body"),
            kw["timeout"],
            options,
        )
        self.requests.append(request)
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return canned(answer).response(method, url, kw.get("preload_content", True))

    def transport(self) -> HttpTransport:
        """An HttpTransport whose requests go to this pool."""
        return HttpTransport(self)

    @property
    def timeouts(self) -> list[tuple[float | None, float | None]]:
        """The (connect, read) time-outs each request was sent with."""
        return [(sent.timeout.connect_timeout, sent.timeout.read_timeout) for sent in self.requests]

    def bodies(self) -> list[Any]:
        """The JSON bodies sent, in order."""
        return [request.json() for request in self.requests]


def canned(answer: tuple[int, Any] | tuple[int, Any, dict[str, str]] | Canned) -> Canned:
    """A tuple answer as a Canned one: a body that is not bytes becomes JSON."""
    if isinstance(answer, Canned):
        return answer
    status, body, *rest = answer
    headers = {"Content-Type": "application/json", **(rest[0] if rest else {})}
    return Canned(status, body if isinstance(body, bytes) else json.dumps(body).encode(), headers)


# The failures urllib3 raises (with `retries=False`), built as it builds them; none opens a socket.


def _connection(host: str) -> HTTPSConnection:
    return HTTPSConnection(host, 443)


def refused(host: str = "api.telegram.org") -> NewConnectionError:
    """Nothing listens on the port: the request was never sent."""
    error = ConnectionRefusedError(111, "Connection refused")
    return NewConnectionError(_connection(host), f"Failed to establish a new connection: {error}")


def unresolvable(host: str = "api.telegram.org") -> NameResolutionError:
    """The host name does not resolve: the request was never sent."""
    return NameResolutionError(host, _connection(host), socket.gaierror(-2, "Name or service not known"))


def connect_timeout(host: str = "api.telegram.org", seconds: float = 5.0) -> ConnectTimeoutError:
    """No connection within the connect time-out: the request was never sent."""
    return ConnectTimeoutError(
        _connection(host), f"Connection to {host} timed out. (connect timeout={seconds})"
    )


def read_timeout(url: str = "/", host: str = "api.telegram.org", seconds: float = 10.0) -> ReadTimeoutError:
    """The request went out and no answer came within the read time-out (`url` is kept on the error)."""
    return ReadTimeoutError(HTTPSConnectionPool(host, 443), url, f"Read timed out. (read timeout={seconds})")


def connection_lost() -> ProtocolError:
    """The connection dropped after the request went out."""
    return ProtocolError("Connection aborted.", ConnectionResetError(104, "Connection reset by peer"))
