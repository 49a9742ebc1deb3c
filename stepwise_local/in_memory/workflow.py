"""`InProcessTurns`: the turn's workflow ports (`TurnStarter`, `TurnResumer`, `TurnStopper` of
`stepwise.turn.workflow`) over the turn's loop in code (`stepwise.states.loop`), for behaviour tests.

Nothing runs when it is asked: a start queues the turn, a resume (an Approve or Deny press) queues the parked
turn's continuation, a stop queues the recovery EventBridge would run for a stopped execution; `drain()` then
runs the queue, oldest first, until nothing is left. A turn that starts another (FinishTurn handing the chat
to the next turn, `spawn_job` starting a job) only adds to the queue: no recursion. As in Step Functions, a
name starts once, a token resumes once, and a turn whose execution failed is recovered
(`stepwise.states.recovery.recover_turn`, as the recovery rule does).
"""

from __future__ import annotations

import itertools
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from stepwise.services import TurnServices
from stepwise.states.loop import Ended, Hooks, Outcome, Parked, State, resume_turn, run_turn
from stepwise.states.recovery import recover_turn
from stepwise.turn.start import TurnStart

Status = Literal["RUNNING", "WAITING", "SUCCEEDED", "FAILED", "ABORTED"]


@dataclass
class Execution:
    """One turn's execution: its input, its status (WAITING: parked on an approval), the states it visited in
    order, and its end (the loop's `Ended`) once it has one."""

    name: str
    start: TurnStart
    status: Status = "RUNNING"
    states: list[State] = field(default_factory=list)
    ended: Ended | None = None
    token: str | None = None  # the task token it waits on, while WAITING


class InProcessTurns:
    """Starts, resumes and stops turns run by the loop in this process; `drain()` runs what is queued.

    `services` builds the turn's services (called when a turn runs: they may hold this object as their
    starter); `wait` is WaitOutTheRateLimit's (seconds; by default it returns at once)."""

    def __init__(
        self, services: Callable[[], TurnServices], wait: Callable[[int], None] | None = None
    ) -> None:
        self._services = services
        self._wait = wait
        self.executions: dict[str, Execution] = {}
        self._queue: deque[Callable[[], None]] = deque()
        self._parked: dict[str, tuple[Execution, Parked]] = {}  # task token -> the turn waiting on it
        self._tokens = itertools.count(1)

    # -- the ports ----------------------------------------------------------------------------------------

    def start(self, name: str, payload: dict[str, Any]) -> bool:
        """TurnStarter: queue the turn; False when a turn of that name exists already."""
        if name in self.executions:
            return False
        execution = self.executions[name] = Execution(name, TurnStart.model_validate(payload))
        self._queue.append(lambda: self._run(execution))
        return True

    def resume(self, task_token: str, output: dict[str, Any]) -> bool:
        """TurnResumer: queue the parked turn's continuation; False when the token is unknown or used."""
        found = self._parked.pop(task_token, None)
        if found is None:
            return False
        execution, parked = found
        execution.token = None
        self._queue.append(lambda: self._resume(execution, parked))
        return True

    def stop(self, name: str, cause: str) -> bool:
        """TurnStopper: stop a running or waiting execution (ABORTED); its recovery is queued."""
        execution = self.executions.get(name)
        if execution is None or execution.status not in ("RUNNING", "WAITING"):
            return False
        if execution.token is not None:
            self._parked.pop(execution.token, None)
        execution.status, execution.token = "ABORTED", None
        self._queue.append(lambda: self._recover(execution))
        return True

    # -- running what is queued ---------------------------------------------------------------------------

    def drain(self) -> None:
        """Run queued turns, continuations and recoveries until none is left (parked turns wait on)."""
        while self.step():
            pass

    def step(self) -> bool:
        """Run the oldest queued work (a turn until it ends or parks, a continuation, a recovery); False when
        nothing was queued."""
        if not self._queue:
            return False
        self._queue.popleft()()
        return True

    def time_out_approvals(self) -> list[str]:
        """The approval wait of every parked turn times out (RequestApproval's Catch: RunApprovedTools
        answers the calls as denied); their tokens resume nothing any more. Returns the executions' names."""
        timed_out = list(self._parked.values())
        self._parked.clear()
        for execution, parked in timed_out:
            execution.token = None
            self._queue.append(lambda e=execution, p=parked: self._resume(e, p))  # type: ignore[misc]
        return [execution.name for execution, _ in timed_out]

    def waiting(self) -> list[str]:
        """The task tokens parked turns wait on, oldest first."""
        return list(self._parked)

    def _hooks(self, execution: Execution) -> Hooks:
        def token() -> str:
            return f"token-{next(self._tokens)}-{execution.name}"

        if self._wait is None:
            return Hooks(task_token=token, visit=execution.states.append)
        return Hooks(task_token=token, wait=self._wait, visit=execution.states.append)

    def _run(self, execution: Execution) -> None:
        if execution.status != "RUNNING":  # stopped before it ran
            return
        self._settle(execution, run_turn(execution.start, self._services(), self._hooks(execution)))

    def _resume(self, execution: Execution, parked: Parked) -> None:
        if execution.status != "WAITING":  # stopped while it waited
            return
        execution.status = "RUNNING"
        self._settle(execution, resume_turn(parked, self._services(), self._hooks(execution)))

    def _settle(self, execution: Execution, outcome: Outcome) -> None:
        if execution.status == "ABORTED":  # stopped while it ran (by its own /jobs stop, say)
            return
        match outcome:
            case Parked(task_token=token):
                execution.status, execution.token = "WAITING", token
                self._parked[token] = (execution, outcome)
            case Ended(status=status):
                execution.status, execution.ended = status, outcome
                if status == "FAILED":
                    self._queue.append(lambda: self._recover(execution))

    def _recover(self, execution: Execution) -> None:
        turn = execution.start.turn.model_copy(update={"turn_id": execution.name})
        recover_turn(turn, execution.status, self._services())
