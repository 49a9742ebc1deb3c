"""Lambda's execution environments, as far as cold starts go: which invocation found a warm container.

Lambda keeps a function's container after an invocation and reuses it for the next one that finds it idle; a
container unused for a while is gone (Lambda does not say how long: `idle_seconds`, on the emulation's
clock). An invocation that finds every container busy, one still initializing included, starts another, cold.
A warm-up's init may be made to last (`busy_seconds`, real seconds) so that tests can show a warm-up that is
not ready in time: the real call then starts a container of its own.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta


@dataclass
class Container:
    """One execution environment of a function."""

    function: str
    number: int
    last_used: datetime
    busy_until: float = field(default=float("inf"))  # monotonic seconds; inf while an invocation runs


class Containers:
    """The emulation's containers of every function."""

    def __init__(self, clock: Callable[[], datetime], idle_seconds: float = 600.0) -> None:
        self._clock = clock
        self._idle = timedelta(seconds=idle_seconds)
        self._lock = threading.Lock()
        self._containers: dict[str, list[Container]] = {}
        self._numbers = 0

    def take(self, function: str) -> tuple[Container, bool]:
        """A container for one invocation, marked busy, and whether it is new (a cold start)."""
        now, moment = self._clock(), time.monotonic()
        with self._lock:
            alive = [c for c in self._containers.get(function, []) if now - c.last_used <= self._idle]
            self._containers[function] = alive
            for container in alive:
                if container.busy_until <= moment:
                    container.busy_until = float("inf")
                    return container, False
            self._numbers += 1
            container = Container(function, self._numbers, now)
            alive.append(container)
            return container, True

    def give_back(self, container: Container, busy_seconds: float = 0.0) -> None:
        """The invocation ended (the container stays busy `busy_seconds` more: an init still running)."""
        with self._lock:
            container.last_used = self._clock()
            container.busy_until = time.monotonic() + busy_seconds

    def expire_all(self) -> None:
        """Every container gone, as after a long quiet spell."""
        with self._lock:
            self._containers.clear()
