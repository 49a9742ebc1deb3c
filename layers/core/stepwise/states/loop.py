"""The turn's loop in code: one turn run in-process through the states and routes of
`statemachine/turn.asl.json`, calling the same core functions its Lambda handlers call.

Production runs the state machine (one Lambda per state, Step Functions between them); this module is its
readable twin, and what behaviour tests run turns on. Read top to bottom, it is the turn's shape:

    LoadContext, then WhatNext on the decision's route:
      model                -> CallModel                     (its failure: UseFallback)
      tools                -> RunTools, then CallModel      (RunTools keeps no output: the decision stays)
      tools_with_approval  -> RunToolsOrAskApproval
      approval             -> RequestApproval, which parks the turn on a task token; the tap (or the
                              request failing) goes on to RunApprovedTools
      wait                 -> WaitOutTheRateLimit, then CallModel
      error                -> FailTurn
      anything else        -> FinishTurn                    (its failure: FinishTurnUndelivered)
    and every other state's failure -> FailTurn.

What each state keeps of its output is what the ASL's ResultSelector keeps (`Next`'s fields), and FailTurn
gets the name of the error that was caught (`$.error.Error`: the exception's class name, as Lambda names it).
`tests/contract/test_turn_loop_matches_asl.py` holds the two to the same states, routes and Catch targets.

What it does not do: the ASL's retries with backoff (a failing state goes straight to its Catch target), its
timeouts (TimeoutSeconds, and the approval's TimeoutSecondsPath: the caller decides when a parked turn times
out, see `resume_turn`), and real waiting (WaitOutTheRateLimit calls `Hooks.wait`, which by default returns at
once). The one retry it makes is RunApprovedTools' on ChatBusyError, because that state's input counts it
(`retake_attempt`: after MAX_RETAKE_RETRIES busy answers the turn goes on regardless). A turn whose
FinishTurnUndelivered fails ends FAILED, as its execution would; the recovery that EventBridge then runs
(`stepwise.states.recovery`) is the caller's to run.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from stepwise.services import TurnServices
from stepwise.states.call_model import call_model
from stepwise.states.contracts.base import Next
from stepwise.states.contracts.call_model import CallModelInput
from stepwise.states.contracts.fallback import FallbackInput
from stepwise.states.contracts.finish_turn import FinishTurnInput, FinishTurnOutput
from stepwise.states.contracts.load_context import LoadContextInput
from stepwise.states.contracts.request_approval import RequestApprovalInput
from stepwise.states.contracts.run_tools import RunToolsInput
from stepwise.states.fallback import use_fallback
from stepwise.states.finish_turn import finish_turn
from stepwise.states.load_context import load_context
from stepwise.states.request_approval import request_approval
from stepwise.states.run_tools import MAX_RETAKE_RETRIES, ChatBusyError, run_tools
from stepwise.turn.start import TurnStart

logger = logging.getLogger(__name__)

State = Literal[
    "LoadContext",
    "CallModel",
    "WaitOutTheRateLimit",
    "RunTools",
    "RunToolsOrAskApproval",
    "RequestApproval",
    "RunApprovedTools",
    "UseFallback",
    "FinishTurn",
    "FailTurn",
    "FinishTurnUndelivered",
]


def _no_wait(seconds: int) -> None:
    """WaitOutTheRateLimit in-process: no sleeping unless the caller asks for it."""


def _unseen(state: State) -> None:
    """No one is told which states a turn visits."""


@dataclass(frozen=True)
class Hooks:
    """What the loop needs from whoever runs it: a task token for RequestApproval, how to wait out a rate
    limit (seconds), and, for tests, a `visit` told the name of each state as the turn enters it."""

    task_token: Callable[[], str]
    wait: Callable[[int], None] = _no_wait
    visit: Callable[[State], None] = _unseen


@dataclass(frozen=True)
class Parked:
    """The turn waits on RequestApproval's task token; `resume_turn` goes on from here. `error` is the caught
    error the execution carries (`$.error`), if any."""

    start: TurnStart
    next: Next
    task_token: str
    error: str | None = None


@dataclass(frozen=True)
class Ended:
    """The turn's end, as its execution ends: SUCCEEDED after FinishTurn, FailTurn or FinishTurnUndelivered
    (`finished`: what that state returned), FAILED when FinishTurnUndelivered failed too (`error`)."""

    start: TurnStart
    status: Literal["SUCCEEDED", "FAILED"]
    finished: FinishTurnOutput | None = None
    error: str | None = None


Outcome = Parked | Ended


def run_turn(start: TurnStart, services: TurnServices, hooks: Hooks) -> Outcome:
    """Run one turn from LoadContext until it ends or parks on an approval."""
    turn = _Turn(start, services, hooks)
    return turn.run(turn.load_context)


def resume_turn(parked: Parked, services: TurnServices, hooks: Hooks) -> Outcome:
    """Go on with a parked turn: the user's tap resumed its token, or its wait timed out (RequestApproval's
    Catch leads to the same state). Either way RunApprovedTools reads the decision from the approval
    record."""
    turn = _Turn(parked.start, services, hooks, parked.error)
    return turn.run(lambda: turn.run_approved_tools(parked.next))


def caught(state: State, error: Exception) -> None:
    """A state failed and its Catch takes the turn on: logged, as its Lambda's failure would be."""
    logger.warning("%s failed: %s: %s", state, error_name(error), error)


def error_name(error: BaseException) -> str:
    """The error's name as Step Functions sees a Lambda's (`$.error.Error`): its class name."""
    return type(error).__name__


class _FailTurn(Exception):
    """A Task's Catch sends the turn to FailTurn (the caught error is the turn's `error` already)."""


@dataclass
class _Turn:
    """One execution's path through the states; `error` is `$.error`, the last error a Catch kept there."""

    start: TurnStart
    services: TurnServices
    hooks: Hooks
    error: str | None = field(default=None)

    def run(self, first: Callable[[], Next]) -> Outcome:
        """Run the first state (whose Next is WhatNext), then on until the turn ends or parks; a Catch that
        leads to FailTurn ends the turn there."""
        try:
            return self.what_next(first())
        except _FailTurn:
            return self.fail_turn(self.error)

    def what_next(self, decision: Next) -> Outcome:
        """The WhatNext Choice, and the states it leads to, until the turn ends or parks."""
        while True:
            match decision.route:
                case "model":
                    decision = self.call_model(decision)
                case "tools":
                    self.run_tools(decision)
                    decision = self.call_model(decision)  # RunTools' Next is CallModel, not WhatNext
                case "tools_with_approval":
                    decision = self.run_tools_or_ask_approval(decision)
                case "approval":
                    parked = self.request_approval(decision)
                    if parked is not None:
                        return parked
                    decision = self.run_approved_tools(decision)
                case "wait":
                    self.wait_out_the_rate_limit(decision)
                    decision = self.call_model(decision)
                case "error":
                    return self.fail_turn(self.error)
                case _:  # the Choice's Default: reply
                    return self.finish_turn()

    # -- the Task states, each with its Catch ------------------------------------------------------------

    def load_context(self) -> Next:
        self.hooks.visit("LoadContext")
        try:
            decision = load_context(LoadContextInput(turn=self.start.turn), self.services)  # Payload: turn
        except Exception as error:  # Catch States.ALL, ResultPath $.error -> FailTurn
            caught("LoadContext", error)
            self.error = error_name(error)
            raise _FailTurn from error
        return Next(route=decision.route)  # its ResultSelector keeps the route; the counters start afresh

    def call_model(self, decision: Next) -> Next:
        self.hooks.visit("CallModel")
        try:
            return kept(call_model(CallModelInput(turn=self.start.turn, next=decision), self.services))
        except Exception as error:  # Catch States.ALL, ResultPath $.error -> UseFallback
            caught("CallModel", error)
            self.error = error_name(error)
            return self.use_fallback(decision)

    def use_fallback(self, decision: Next) -> Next:
        self.hooks.visit("UseFallback")
        request = FallbackInput(turn=self.start.turn, error=self.error, next=decision)
        try:
            return kept(use_fallback(request, self.services))
        except Exception as error:  # Catch States.ALL, ResultPath $.fallback_error -> FailTurn
            caught("UseFallback", error)
            raise _FailTurn from error

    def run_tools(self, decision: Next) -> None:
        self.hooks.visit("RunTools")
        try:
            run_tools(RunToolsInput(turn=self.start.turn, next=decision), self.services)  # ResultPath null
        except Exception as error:  # Catch States.ALL, ResultPath $.error -> FailTurn
            caught("RunTools", error)
            self.error = error_name(error)
            raise _FailTurn from error

    def run_tools_or_ask_approval(self, decision: Next) -> Next:
        self.hooks.visit("RunToolsOrAskApproval")
        try:
            request = RunToolsInput(turn=self.start.turn, next=decision, approvals=True)
            return kept(run_tools(request, self.services))
        except Exception as error:  # Catch States.ALL, ResultPath $.error -> FailTurn
            caught("RunToolsOrAskApproval", error)
            self.error = error_name(error)
            raise _FailTurn from error

    def request_approval(self, decision: Next) -> Parked | None:
        """Show the request and park the turn on a new task token; None when the request failed (its Catch,
        like the wait's timeout, goes on to RunApprovedTools, which answers the calls as denied)."""
        self.hooks.visit("RequestApproval")
        token = self.hooks.task_token()
        try:
            approval_id = decision.approval_id or ""
            request = RequestApprovalInput(turn=self.start.turn, approval_id=approval_id, task_token=token)
            request_approval(request, self.services)
        except Exception as error:  # Catch States.ALL, ResultPath $.approval_error -> RunApprovedTools
            caught("RequestApproval", error)
            return None
        return Parked(self.start, decision, token, self.error)

    def run_approved_tools(self, decision: Next) -> Next:
        self.hooks.visit("RunApprovedTools")
        for attempt in range(MAX_RETAKE_RETRIES + 1):  # Retry ChatBusyError, MaxAttempts 12
            request = RunToolsInput(
                turn=self.start.turn, next=decision, approvals=True, resume=True, retake_attempt=attempt
            )
            try:
                return kept(run_tools(request, self.services))
            except ChatBusyError as busy:
                last: Exception = busy
            except Exception as error:  # Catch States.ALL, ResultPath $.error -> FailTurn
                last = error
                break
        caught("RunApprovedTools", last)
        self.error = error_name(last)
        raise _FailTurn from last

    def wait_out_the_rate_limit(self, decision: Next) -> None:
        self.hooks.visit("WaitOutTheRateLimit")
        self.hooks.wait(decision.wait_seconds)

    # -- the ends: FinishTurn and FailTurn, and FinishTurnUndelivered when those fail -------------------

    def finish_turn(self) -> Ended:
        self.hooks.visit("FinishTurn")
        return self._finish(FinishTurnInput(turn=self.start.turn))

    def fail_turn(self, error: str | None) -> Ended:
        self.hooks.visit("FailTurn")
        return self._finish(FinishTurnInput(turn=self.start.turn, error=error))

    def _finish(self, request: FinishTurnInput) -> Ended:
        try:
            return Ended(self.start, "SUCCEEDED", finish_turn(request, self.services))
        except Exception as error:  # Catch States.ALL, ResultPath $.delivery_error -> FinishTurnUndelivered
            caught("FinishTurn", error)
        self.hooks.visit("FinishTurnUndelivered")
        try:
            undelivered = FinishTurnInput(turn=self.start.turn, deliver=False)
            return Ended(self.start, "SUCCEEDED", finish_turn(undelivered, self.services))
        except Exception as error:  # no Catch: the execution fails (the recovery rule frees the chat)
            caught("FinishTurnUndelivered", error)
            return Ended(self.start, "FAILED", error=error_name(error))


def kept(output: Next) -> Next:
    """What the ASL's ResultSelector keeps of a deciding state's output: the decision's own fields
    (CallModel's usage figures are left out)."""
    return Next.model_validate(output.model_dump(include=set(Next.model_fields)))
