"""The inputs and outputs of the state machine's states (kept small: ids and counters).

Every state that decides where the turn goes returns a `Next`; the state machine's one Choice state
(`WhatNext`) reads its `route`. The execution's own input (`TurnRef`, `TurnStart`) is in `stepwise.turn_ref`.

Each state's contract is a module of its own, so that a function builds only the models it uses (a pydantic
model costs its function's cold start about a fifth of a millisecond); names imported from this package are
loaded from their module on first use.
"""

from importlib import import_module
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from stepwise.states.contracts.base import Next, Route, TurnInput
    from stepwise.states.contracts.call_model import CallModelInput, CallModelOutput
    from stepwise.states.contracts.fallback import FallbackInput
    from stepwise.states.contracts.finish_turn import FinishTurnInput, FinishTurnOutput
    from stepwise.states.contracts.load_context import LoadContextInput
    from stepwise.states.contracts.request_approval import RequestApprovalInput, RequestApprovalOutput
    from stepwise.states.contracts.run_tools import RunToolsInput
    from stepwise.turn_ref import Limits, TurnRef, TurnStart

_MODULES = {
    "CallModelInput": "stepwise.states.contracts.call_model",
    "CallModelOutput": "stepwise.states.contracts.call_model",
    "FallbackInput": "stepwise.states.contracts.fallback",
    "FinishTurnInput": "stepwise.states.contracts.finish_turn",
    "FinishTurnOutput": "stepwise.states.contracts.finish_turn",
    "Limits": "stepwise.turn_ref",
    "LoadContextInput": "stepwise.states.contracts.load_context",
    "Next": "stepwise.states.contracts.base",
    "RequestApprovalInput": "stepwise.states.contracts.request_approval",
    "RequestApprovalOutput": "stepwise.states.contracts.request_approval",
    "Route": "stepwise.states.contracts.base",
    "RunToolsInput": "stepwise.states.contracts.run_tools",
    "TurnInput": "stepwise.states.contracts.base",
    "TurnRef": "stepwise.turn_ref",
    "TurnStart": "stepwise.turn_ref",
}

__all__ = [
    "CallModelInput",
    "CallModelOutput",
    "FallbackInput",
    "FinishTurnInput",
    "FinishTurnOutput",
    "Limits",
    "LoadContextInput",
    "Next",
    "RequestApprovalInput",
    "RequestApprovalOutput",
    "Route",
    "RunToolsInput",
    "TurnInput",
    "TurnRef",
    "TurnStart",
]


def __getattr__(name: str) -> object:
    module = _MODULES.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(module), name)
