"""The inputs and outputs of the state machine's states (kept small: ids and counters).

Every state that decides where the turn goes returns a `Next`; the state machine's one Choice state
(`WhatNext`) reads its `route`. The execution's own input (`TurnRef`, `TurnStart`) is in `stepwise.turn_ref`.
"""

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from stepwise.turn_ref import Limits, TurnRef, TurnStart

__all__ = ["Limits", "TurnRef", "TurnStart"]  # used by the states with their own contracts


class _Contract(BaseModel):
    model_config = ConfigDict(defer_build=True, extra="ignore")


class TurnInput(_Contract):
    """Every state's input carries the turn; FinishTurn needs nothing else."""

    turn: TurnRef


class LoadContextInput(TurnInput):
    """The execution's input, as LoadContext receives it."""

    limits: Limits | None = None


Route = Literal["model", "tools", "tools_with_approval", "approval", "wait", "reply", "error"]


class Next(_Contract):
    """Where the turn goes next, decided once by the state that knows (LoadContext, CallModel, RunTools,
    UseFallback) and read by the state machine's `WhatNext` Choice:

    - model: call the model (again); `final` asks for an answer without tools (the tool-round limit);
    - tools: run step `step`'s tool calls, none of which needs approval, then call the model;
    - tools_with_approval: run step `step`'s safe calls and ask the user about the others;
    - approval: wait for the user's decision on `approval_id`;
    - wait: the model API asked to retry later: wait `wait_seconds`, then call the model again;
    - reply: the turn has its reply (or nothing to answer): send it, save it, finish;
    - error: the turn cannot answer: tell the user briefly and finish.

    `waits` counts the turn's waits for the API's `retry-after`, carried from call to call.
    """

    route: Route
    step: int = Field(default=0, ge=0)
    final: bool = False
    waits: int = Field(default=0, ge=0)
    wait_seconds: int = Field(default=0, ge=0)
    approval_id: str | None = None


class CallModelInput(TurnInput):
    """CallModel's input: the previous decision (its `final` and `waits`)."""

    next: Next = Field(default_factory=lambda: Next(route="model"))


class CallModelOutput(Next):
    """CallModel's decision, with what the call cost (published as metrics; the state machine keeps only the
    decision's fields)."""

    stop_reason: str = ""
    tool_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_input_tokens: int = 0
    cache_creation_input_tokens: int = 0


class RunToolsInput(TurnInput):
    """RunTools' input: the step whose tool calls to run. `approvals`: calls that need approval are gathered
    into a request (else they are refused: the route said none needs one). `resume`: back from the approval
    wait, the turn first takes the chat back; `retake_attempt` is the state's retry count (after
    `MAX_RETAKE_RETRIES` busy answers it goes on regardless)."""

    next: Next
    approvals: bool = False
    resume: bool = False
    retake_attempt: int = Field(default=0, ge=0)


class RequestApprovalInput(TurnInput):
    """RequestApproval's input: the request to show and the token that resumes the turn."""

    approval_id: str
    task_token: str = Field(min_length=1)


class RequestApprovalOutput(_Contract):
    """The Telegram message that carries the buttons."""

    message_id: int


class FallbackInput(TurnInput):
    """UseFallback's input: the error that ended the model calls, and the decision that led to the call."""

    error: str | None = None
    next: Next = Field(default_factory=lambda: Next(route="model"))


class FinishTurnInput(TurnInput):
    """FinishTurn's input. `error`: the turn failed (this error's name): the friendly error reply replaces any
    other. `deliver`: False when delivery failed for good; the turn is saved and finished without it."""

    error: str | None = None
    deliver: bool = True


class FinishTurnOutput(_Contract):
    """How the turn ended: chunks sent, whether the reply was stored, and the next turn started (if any)."""

    source: str | None = None
    sent_chunks: int = 0
    saved: bool = False
    next_turn: str | None = None
