"""A stand-in for the Messages API on 127.0.0.1 that keeps every request exactly as it arrived (method, path,
headers, body bytes) and answers each with the next canned reply: JSON, an error, or a stream of server-sent
events in chunked encoding that may break off. The contract tests send the same calls through the SDK and
through the lean client to it and compare what it saw and what they made of its replies."""

from __future__ import annotations

import threading
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from stepwise_local.loopback import LoopbackServer


@dataclass(frozen=True)
class Reply:
    """One canned reply. With `chunks` the body is sent in chunked encoding, one chunk each; with `drop`
    the connection closes after them, without the final empty chunk (a stream cut off mid-way)."""

    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    chunks: tuple[bytes, ...] | None = None
    drop: bool = False


@dataclass(frozen=True)
class Seen:
    """One request as it arrived: header names in lower case."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes


class RecordingApi(LoopbackServer):
    """`with RecordingApi() as api:` then api.script(...) replies; api.seen holds the requests."""

    thread_name = "recording-api"

    def __init__(self) -> None:
        self.seen: list[Seen] = []
        self._replies: deque[Reply] = deque()
        self._lock = threading.Lock()

    @property
    def base_url(self) -> str:
        return self.root_url

    def script(self, *replies: Reply) -> None:
        """Queue replies for the next requests, in order."""
        with self._lock:
            self._replies.extend(replies)

    def clear(self) -> None:
        """Forget the requests seen and the replies left."""
        with self._lock:
            self.seen.clear()
            self._replies.clear()

    def _next(self, seen: Seen) -> Reply:
        with self._lock:
            self.seen.append(seen)
            if self._replies:
                return self._replies.popleft()
        return Reply(500, b'{"type":"error","error":{"type":"api_error","message":"nothing scripted"}}')

    def handler(self) -> type[BaseHTTPRequestHandler]:
        api = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("content-length", 0)))
                headers = {name.lower(): value for name, value in self.headers.items()}
                reply = api._next(Seen("POST", self.path, headers, body))
                self.close_connection = True
                self.send_response(reply.status)
                for name, value in reply.headers.items():
                    self.send_header(name, value)
                self.send_header("connection", "close")
                if reply.chunks is None:
                    self.send_header("content-length", str(len(reply.body)))
                    self.end_headers()
                    self.wfile.write(reply.body)
                    return
                self.send_header("transfer-encoding", "chunked")
                self.end_headers()
                try:
                    for chunk in reply.chunks:
                        self.wfile.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
                        self.wfile.flush()
                    if not reply.drop:
                        self.wfile.write(b"0\r\n\r\n")
                except (BrokenPipeError, ConnectionResetError):  # the client stopped reading
                    pass

        return Handler
