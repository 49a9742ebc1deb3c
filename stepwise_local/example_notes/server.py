"""`with ExampleNotesServer() as server:` the example notes server on 127.0.0.1, served by uvicorn in a
thread of this process: an OAuth authorization server with its own sign-in page and an MCP server at
`server.mcp_url` that accepts only its own access tokens (`stepwise_local.example_notes.app`)."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Sequence

import uvicorn

from stepwise_local.example_notes.app import MCP_PATH, SeenRequests, notes_app
from stepwise_local.example_notes.authorization import SignInProvider
from stepwise_local.example_notes.notes import Notes

DEFAULT_SCOPES = ("notes",)


class ExampleNotesServer:
    """The example notes server on `host`:`port` (a free port by default). Its access tokens live
    `access_token_seconds` on `clock` (time.time by default; a test or `make chat` may pass a clock it
    moves); `scopes` are the scopes it offers and requires. `provider`, `notes` and `seen` are its state."""

    def __init__(
        self,
        port: int = 0,
        host: str = "127.0.0.1",
        *,
        access_token_seconds: int = 3600,
        scopes: Sequence[str] = DEFAULT_SCOPES,
        clock: Callable[[], float] = time.time,
        bound: socket.socket | None = None,
    ) -> None:
        """`bound`: a socket bound already (on `host`), used instead of binding `port`."""
        if bound is None:
            bound = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            bound.bind((host, port))
        self._socket = bound
        bound_port = self._socket.getsockname()[1]
        self.url = f"http://{host}:{bound_port}"
        self.mcp_url = self.url + MCP_PATH
        self.provider = SignInProvider(self.url, self.mcp_url, list(scopes), access_token_seconds, clock)
        self.notes = Notes()
        self.seen = SeenRequests()
        config = uvicorn.Config(
            notes_app(self.provider, self.notes, self.seen),
            log_config=None,  # leave the process's logging as it is (make chat prints its own)
            log_level="warning",
            access_log=False,
            lifespan="on",
            timeout_graceful_shutdown=5,
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [self._socket]}, name="example-notes", daemon=True
        )

    def __enter__(self) -> ExampleNotesServer:
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                self.__exit__()
                raise RuntimeError("the example notes server did not start")
            time.sleep(0.01)
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.should_exit = True
        if self._thread.is_alive():
            self._thread.join(timeout=10)
        self._socket.close()
