"""Warm-ups: after a quiet spell, the webhook starts the containers a turn will need next, in parallel.

A message that arrives after the chat has been quiet for `WARMUP_AFTER_QUIET_SECONDS` (five minutes by
default) most likely finds every container gone, and the turn would pay each state's cold start one after the
other. So once the webhook has started the turn, it invokes CallModel and FinishTurn (and RunTools when the
message looks like it needs a tool) asynchronously with a warm-up event: Lambda starts a container for each,
whose init (importing the function's code) then runs while the earlier states work, and the handler returns
at once without touching anything (`stepwise.warmups.event`). A warm-up helps only when its init has finished
before the real call arrives, since an invocation that finds every container busy (one still initializing
included) starts another: FinishTurn and RunTools have the model's time to get ready, CallModel only
LoadContext's.

When the webhook's own container had no request for that long too (or is new), the stack as a whole was
quiet: the warm-ups then leave before the webhook takes the chat's lease and starts the turn, so their inits
also overlap the webhook's own first requests (`Warmups.container_was_quiet`). Otherwise they leave once the
turn has started, if its chat was quiet.

The webhook waits for the invocations' 202 answers at most `WARMUP_TIMEOUT_SECONDS` (they run
concurrently, while it works); a warm-up that fails or is slow is logged once and changes nothing. Warm-ups
reach the functions only through Lambda's Invoke API, which only the webhook's role may call on them.
"""

from __future__ import annotations

import functools
import logging
import re
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from stepwise.warmups.event import WARMUP_PAYLOAD

if TYPE_CHECKING:
    import re
    from collections.abc import Callable, Sequence
    from datetime import datetime

logger = logging.getLogger(__name__)

# Words of messages that usually end in a tool call (tasks, reminders, memory, jobs): RunTools is warmed too.
TOOL_WORDS = (
    r"\b(add|adds|remind|reminder|task|tasks|todo|to-do|list|done|finish|delete|remove|rename|remember|"
    r"forget|recall|schedule|every|tomorrow|tonight|background|job|check[- ]?in)\b"
)


@dataclass(frozen=True)
class WarmupTargets:
    """The functions a turn needs after LoadContext (their names or ARNs)."""

    call_model: str
    finish_turn: str
    run_tools: str


@dataclass(eq=False, repr=False)
class Warmups:
    """Decides whether a started turn is worth warming up for, and sends the warm-ups.

    `invoke(function)` invokes one function asynchronously with `WARMUP_EVENT` (and raises on failure); it is
    called from worker threads.
    """

    targets: WarmupTargets
    invoke: Callable[[str], None]
    quiet_seconds: int = 300
    timeout_seconds: float = 0.25

    def wanted(self, idle_seconds: int | None, text: str, command: bool) -> list[str]:
        """The functions to warm for a turn that started after `idle_seconds` without one in its chat (None:
        the chat's first): none while the chat was busy; FinishTurn always, CallModel unless the message is a
        command (answered without the model), RunTools when the message reads like a tool call."""
        if self.quiet_seconds <= 0 or (idle_seconds is not None and idle_seconds < self.quiet_seconds):
            return []
        wanted = [self.targets.finish_turn]
        if not command:
            wanted.append(self.targets.call_model)
            if _tool_words().search(text):
                wanted.append(self.targets.run_tools)
        return wanted

    def container_was_quiet(self, now: datetime) -> bool:
        """Note a webhook request at `now`; True when this container had none for `quiet_seconds` before it
        (or none at all: it is new), so the stack was most likely quiet and its containers are gone."""
        global _container_last_request
        last, _container_last_request = _container_last_request, now
        return self.quiet_seconds > 0 and (last is None or (now - last).total_seconds() >= self.quiet_seconds)

    def begin(self, functions: Sequence[str]) -> InFlight:
        """Invoke each function, concurrently, in worker threads; `InFlight.finish` waits for them."""
        flight = InFlight(list(functions), self.timeout_seconds)
        for function in flight.functions:
            thread = threading.Thread(target=flight.warm, args=(self.invoke, function), daemon=True)
            flight.threads.append(thread)
            thread.start()
        return flight

    def send(self, functions: Sequence[str]) -> None:
        """Invoke each function concurrently and wait for their answers at most `timeout_seconds`; failures
        and time-outs are logged in one line, never raised."""
        self.begin(functions).finish()


# The last webhook request this container saw (the module is loaded once per container).
_container_last_request: datetime | None = None


def forget_container() -> None:
    """As if the webhook's container were new (the local emulation, when it models a fresh one)."""
    global _container_last_request
    _container_last_request = None


@dataclass
class InFlight:
    """Warm-ups on their way: their threads, and what failed."""

    functions: list[str]
    timeout_seconds: float
    threads: list[threading.Thread] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def warm(self, invoke: Callable[[str], None], function: str) -> None:
        """One warm-up (in its worker thread)."""
        try:
            invoke(function)
        except Exception as error:  # a warm-up is best effort: nothing depends on it
            with self._lock:
                self.failures.append(f"{_short_name(function)}: {type(error).__name__}")

    def finish(self) -> None:
        """Wait for the answers, at most `timeout_seconds` in all from now; log failures and time-outs in one
        line, never raise."""
        if not self.functions:
            return
        for thread in self.threads:
            thread.join(self.timeout_seconds)
        late = [_short_name(f) for f, t in zip(self.functions, self.threads, strict=True) if t.is_alive()]
        logger.debug("warm-ups started", extra={"functions": [_short_name(f) for f in self.functions]})
        if self.failures or late:
            logger.warning(
                "warm-ups failed or were slow; the turn goes on without them",
                extra={"failed": list(self.failures), "not_answered_in_time": late},
            )


@functools.cache
def _tool_words() -> re.Pattern[str]:
    """TOOL_WORDS, compiled when the webhook first needs it (every state imports this module)."""
    return re.compile(TOOL_WORDS, re.IGNORECASE)


def _short_name(function: str) -> str:
    """A function's name from its ARN (the log shows names)."""
    return function.rsplit(":", 1)[-1] if function.startswith("arn:") else function


class LambdaWarmer:
    """`Warmups.invoke` on Lambda's Invoke API: `InvocationType=Event` (queued, answered 202 at once). Its
    client is a `LazyClient` with short time-outs and no retries, made on the first warm-up (in a worker
    thread)."""

    def __init__(self, client: Any) -> None:
        self.client = client

    def __call__(self, function: str) -> None:
        self.client.invoke(FunctionName=function, InvocationType="Event", Payload=WARMUP_PAYLOAD)
