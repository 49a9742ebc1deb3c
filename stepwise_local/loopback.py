"""What every HTTP stand-in of the local stack shares: a threaded server on an ephemeral port of
127.0.0.1, started and stopped (or used as a context manager), that hands its requests to the stand-in."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Self


class ApiServer(ThreadingHTTPServer):
    """The server; its handlers reach the stand-in as `self.server.api`."""

    daemon_threads = True

    def __init__(self, handler: type[BaseHTTPRequestHandler], api: Any) -> None:
        super().__init__(("127.0.0.1", 0), handler)
        self.api = api


class LoopbackServer:
    """Start, stop and the root URL of a stand-in; a subclass names its handler and its thread."""

    thread_name = "loopback-server"
    _server: ApiServer | None = None
    _thread: threading.Thread | None = None

    def handler(self) -> type[BaseHTTPRequestHandler]:
        """The request handler class (its `server.api` is this stand-in)."""
        raise NotImplementedError

    def start(self) -> Self:
        """Start serving on an ephemeral port of 127.0.0.1."""
        if self._server is None:
            self._server = ApiServer(self.handler(), self)
            self._thread = threading.Thread(
                target=self._server.serve_forever, args=(0.05,), name=self.thread_name, daemon=True
            )
            self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and release the port."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            if self._thread is not None:
                self._thread.join(timeout=5)
            self._server, self._thread = None, None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()

    @property
    def root_url(self) -> str:
        """``http://127.0.0.1:PORT`` (the server must be started)."""
        if self._server is None:
            raise RuntimeError(f"{type(self).__name__} is not started")
        return f"http://127.0.0.1:{self._server.server_address[1]}"
