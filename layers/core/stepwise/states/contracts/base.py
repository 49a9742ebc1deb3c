"""What every state's contract shares: the turn it belongs to, and the decision (`Next`) that routes it."""

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from stepwise.turn.ref import TurnRef

# Each contract sets it rather than inheriting it from a shared base: every state's import builds each class.
CONTRACT_CONFIG = ConfigDict(defer_build=True, extra="ignore")


class TurnInput(BaseModel):
    """Every state's input carries the turn; FinishTurn needs nothing else."""

    model_config = CONTRACT_CONFIG

    turn: TurnRef


Route = Literal["model", "tools", "tools_with_approval", "approval", "wait", "reply", "error"]


class Next(BaseModel):
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

    model_config = CONTRACT_CONFIG

    route: Route
    step: int = Field(default=0, ge=0)
    final: bool = False
    waits: int = Field(default=0, ge=0)
    wait_seconds: int = Field(default=0, ge=0)
    approval_id: str | None = None
