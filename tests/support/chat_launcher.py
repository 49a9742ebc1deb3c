"""`make chat` for the tests without paying for its imports each time: a launcher process imports the chat's
modules once (moto, boto3, the emulation, the core: about 3.5 s of CPU), then forks a copy of itself for each
chat.

The copy runs `python -m stepwise_local.chat` as the interpreter would (`runpy`, `__main__`), on the caller's
own standard input, output and error (passed over a Unix socket), in its directory and with its environment,
and exits with the chat's status. So a test still talks to a process of its own through real pipes; only the
interpreter's start is shared. The tests of what happens at the process's edges (Ctrl-C, a terminal, the
imports before the stack can take a Ctrl-C) start a real interpreter instead.

    serve SOCKET      the launcher (`ChatLauncher` starts it)
    run ARGS...       one chat, through the launcher named by STEPWISE_CHAT_LAUNCHER (this file is run with
                      `python -S`: the client imports nothing but the standard library)
"""

from __future__ import annotations

import atexit
import contextlib
import faulthandler
import json
import os
import select
import signal
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

SOCKET_VARIABLE = "STEPWISE_CHAT_LAUNCHER"
PRELOAD = ("stepwise", "stepwise_local")  # every module of these packages (the emulation imports the core
# in this process too, under each function's environment: nothing in it depends on the environment it was
# imported in)
CHAT = "stepwise_local.chat"
HEADER_BYTES = 1 << 20


def serve(path: str) -> None:
    """Import the chat's modules, then run one chat per connection in a forked copy, one at a time."""
    import importlib
    import pkgutil

    for package in PRELOAD:
        for module in pkgutil.walk_packages(importlib.import_module(package).__path__, f"{package}."):
            try:
                importlib.import_module(module.name)
            except ImportError:  # stepwise.lambda_entry: only in a Lambda package
                continue
    sys.modules.pop(CHAT)  # run as __main__ below, as `python -m` does
    _fill_caches()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen()
    print("ready", flush=True)
    while True:
        # The standard input is a pipe from the tests' process: its end (the tests ended, however) ends this.
        readable, _, _ = select.select([listener, sys.stdin], [], [])
        if sys.stdin in readable and not sys.stdin.buffer.read1(1):
            return
        if listener not in readable:
            continue
        connection, _ = listener.accept()
        with connection:
            header, fds, _, _ = socket.recv_fds(connection, HEADER_BYTES, 3)
            request = json.loads(header)
            pid = os.fork()
            if pid == 0:
                listener.close()
                connection.close()
                _chat(request, fds)  # never returns
            for fd in fds:
                os.close(fd)
            connection.sendall(f"{pid}\n".encode())
            _, status = os.waitpid(pid, 0)
            connection.sendall(f"{os.waitstatus_to_exitcode(status)}\n".encode())


def _fill_caches() -> None:
    """Start and stop a stack once, so that the process-wide caches each chat would fill again are filled here
    (moto's service models and routers, boto3's default session, the parsed template and state machine): a
    second off each chat's start. Nothing runs on after it, so the forks copy a process of one thread."""
    import threading

    import boto3

    from stepwise.warmups.event import WARMUP_KEY
    from stepwise_local.emulation import Emulation, LocalConfig

    with Emulation(LocalConfig(telegram_base_url="http://127.0.0.1:9")):
        # through moto's Lambda API, as the state machine invokes (its routes are built on the first request),
        # a function warm-ups reach (those only the HTTP API invokes load on their first request)
        warmup = json.dumps({WARMUP_KEY: True})
        answer = boto3.client("lambda").invoke(FunctionName="FinishTurnFunction", Payload=warmup)
        assert "FunctionError" not in answer, answer["Payload"].read()
    assert threading.active_count() == 1, threading.enumerate()


def _chat(request: dict[str, object], fds: list[int]) -> None:
    """In the forked copy: the caller's streams, directory and environment, then the chat as `python -m`."""
    import runpy

    code = 1
    try:
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
            os.close(fd)
        sys.stdin = open(0, closefd=False)  # noqa: SIM115 (the process's own stream, for its lifetime)
        sys.stdout = open(1, "w", closefd=False, buffering=1 if os.isatty(1) else -1)  # noqa: SIM115
        sys.stderr = open(2, "w", closefd=False, buffering=1, errors="backslashreplace")  # noqa: SIM115
        faulthandler.enable(all_threads=True)  # a crash in C code says where, on the caller's standard error
        signal.signal(signal.SIGINT, signal.default_int_handler)
        os.chdir(str(request["cwd"]))
        os.environ.clear()
        os.environ.update(request["env"])  # type: ignore[arg-type]
        sys.argv = [CHAT, *request["args"]]  # type: ignore[misc]
        try:
            runpy.run_module(CHAT, run_name="__main__", alter_sys=True)
            code = 0
        except SystemExit as exit_:
            code = exit_.code if isinstance(exit_.code, int) else (0 if exit_.code is None else 1)
    except BaseException:
        import traceback

        traceback.print_exc()
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(OSError, ValueError):  # a closed pipe: nothing more can be said
                stream.flush()
        os._exit(code)


def run(args: list[str]) -> int:
    """One chat through the launcher: this process's streams, directory and environment; its exit status.
    A SIGINT or SIGTERM this process gets is passed on to the chat."""
    client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    client.connect(os.environ[SOCKET_VARIABLE])
    request = {"args": args, "cwd": str(Path.cwd()), "env": dict(os.environ)}
    socket.send_fds(client, [json.dumps(request).encode()], [0, 1, 2])
    answers = client.makefile("r")
    pid = int(answers.readline())

    def forward(signum: int, _: object) -> None:
        os.kill(pid, signum)

    signal.signal(signal.SIGINT, forward)
    signal.signal(signal.SIGTERM, forward)
    return int(answers.readline())


class ChatLauncher:
    """The launcher process of one pytest worker (`shared`): `command` is what replaces `python -m
    stepwise_local.chat`, and `env` what the environment must add."""

    def __init__(self) -> None:
        root = Path(__file__).resolve().parents[2]
        self.socket = str(Path(tempfile.mkdtemp(prefix="chat-")) / "launcher.sock")  # short: a socket's limit
        pythonpath = os.pathsep.join([str(root / "layers" / "core"), str(root)])
        self._process = subprocess.Popen(
            [sys.executable, __file__, "serve", self.socket],
            env={**os.environ, "PYTHONPATH": pythonpath},
            cwd=root,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self._process.stdout is not None
        if self._process.stdout.readline().strip() != "ready":
            raise RuntimeError("the chat launcher did not start")

    @property
    def command(self) -> list[str]:
        return [sys.executable, "-S", __file__, "run"]

    @property
    def env(self) -> dict[str, str]:
        return {SOCKET_VARIABLE: self.socket}

    def close(self) -> None:
        self._process.kill()
        self._process.wait()


_shared: list[ChatLauncher] = []


def shared() -> ChatLauncher:
    """This process's launcher, started on first use (a few seconds) and stopped when the process ends."""
    if not _shared:
        _shared.append(ChatLauncher())
        atexit.register(_shared[0].close)
    return _shared[0]


if __name__ == "__main__":
    if sys.argv[1] == "serve":
        serve(sys.argv[2])
    else:
        raise SystemExit(run(sys.argv[2:]))
