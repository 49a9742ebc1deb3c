"""The turn's loop in code (`stepwise.states.loop`) and the state machine (`statemachine/turn.asl.json`)
agree, read from the ASL itself: the same states; WhatNext's routes and the states they lead to; each
Task's Next, Catch targets and End; what each Task is given (its Payload's keys) and what it keeps (its
ResultSelector).

Every transition of the ASL is driven through the loop, with each state's core function replaced by a fake
that returns the route it is told or raises: the states the loop visits must be the ASL's path to that
transition, then the transition's source and target.
"""

from __future__ import annotations

import ast
import inspect
import json
import textwrap
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast, get_args

import pytest
from pydantic import BaseModel

from stepwise.services import TurnServices
from stepwise.states import loop
from stepwise.states.contracts.base import Next, Route
from stepwise.states.contracts.call_model import CallModelOutput
from stepwise.states.contracts.finish_turn import FinishTurnOutput
from stepwise.states.contracts.request_approval import RequestApprovalOutput
from stepwise.turn.ref import TurnRef
from stepwise.turn.start import TurnStart

ASL = json.loads((Path(__file__).resolve().parents[2] / "statemachine" / "turn.asl.json").read_text())
STATES: dict[str, dict[str, Any]] = ASL["States"]
CHOICE = "WhatNext"
END = "(end)"  # the execution ends: SUCCEEDED after a state with End, FAILED after one without a Catch
FAILED = "(failed)"
# The core function each Task's Lambda runs, by the name the loop calls it by.
FUNCTION_OF = {
    "LoadContext": "load_context",
    "CallModel": "call_model",
    "RunTools": "run_tools",
    "RunToolsOrAskApproval": "run_tools",
    "RunApprovedTools": "run_tools",
    "RequestApproval": "request_approval",
    "UseFallback": "use_fallback",
    "FinishTurn": "finish_turn",
    "FailTurn": "finish_turn",
    "FinishTurnUndelivered": "finish_turn",
}


def choices() -> dict[str, str]:
    """WhatNext's routes and their states; "reply" (any route not listed) for the Default."""
    choice = STATES[CHOICE]
    routes = {c["StringEquals"]: c["Next"] for c in choice["Choices"] if c["Variable"] == "$.next.route"}
    assert len(routes) == len(choice["Choices"]), "every choice reads $.next.route with StringEquals"
    return routes | {"reply": choice["Default"]}


@dataclass(frozen=True)
class Edge:
    """One transition of the ASL: `source` ends `how` (a route when it goes through WhatNext, "ok", or
    "raise") and the execution goes to `target`."""

    source: str
    how: str
    target: str


def edges() -> list[Edge]:
    """Every transition of the ASL's turn."""
    found = []
    for name, state in STATES.items():
        if state["Type"] == "Choice":
            continue
        if state.get("Next") == CHOICE:
            found += [Edge(name, route, target) for route, target in choices().items()]
        else:
            found.append(Edge(name, "ok", state.get("Next", END)))
        if state["Type"] == "Task":
            catches = [c["Next"] for c in state.get("Catch", []) if c["ErrorEquals"] == ["States.ALL"]]
            assert len(catches) == len(state.get("Catch", [])) <= 1, f"{name}: one Catch of States.ALL"
            found.append(Edge(name, "raise", catches[0] if catches else FAILED))
    return found


def path_to(state: str) -> list[Edge]:
    """The shortest run of transitions from StartAt to `state`."""
    start = ASL["StartAt"]
    paths: dict[str, list[Edge]] = {start: []}
    queue = deque([start])
    while queue:
        current = queue.popleft()
        for edge in edges():
            if edge.source == current and edge.target not in paths and edge.target in STATES:
                paths[edge.target] = [*paths[current], edge]
                queue.append(edge.target)
    return paths[state]


class Scripted:
    """The states' core functions, faked: each run of a state takes the next of its scripted endings (a
    route, "ok" or "raise"; "reply" or "ok" when none is left) and records the input it was given."""

    def __init__(self, endings: list[tuple[str, str]]) -> None:
        self.endings: dict[str, deque[str]] = {}
        for state, how in endings:
            self.endings.setdefault(state, deque()).append(how)
        self.visited: list[str] = []
        self.inputs: dict[str, set[str]] = {}

    def visit(self, state: loop.State) -> None:
        self.visited.append(state)

    def fake(self, function: str) -> Any:
        def run(request: BaseModel, services: TurnServices) -> BaseModel:
            state = self.visited[-1]
            assert FUNCTION_OF[state] == function, f"{state} called {function}"
            self.inputs[state] = set(request.model_fields_set)
            queued = self.endings.get(state)
            how = queued.popleft() if queued else "ok"
            if how == "raise":
                raise RuntimeError(f"{state} failed")
            return self.output(state, "reply" if how == "ok" else how)

        return run

    @staticmethod
    def output(state: str, route: str) -> BaseModel:
        if FUNCTION_OF[state] == "finish_turn":
            return FinishTurnOutput(sent_chunks=1)
        if state == "RequestApproval":
            return RequestApprovalOutput(message_id=1)
        if state == "CallModel":
            return CallModelOutput(route=cast(Route, route), approval_id="approval-1", input_tokens=9)
        return Next(route=cast(Route, route), approval_id="approval-1")


def drive(monkeypatch: pytest.MonkeyPatch, endings: list[tuple[str, str]]) -> tuple[Scripted, loop.Ended]:
    """Run one turn through the loop with faked states; a parked turn is resumed (the tap came)."""
    script = Scripted(endings)
    for function in set(FUNCTION_OF.values()):
        monkeypatch.setattr(loop, function, script.fake(function))
    hooks = loop.Hooks(task_token=lambda: "token-1", visit=script.visit)
    start = TurnStart(turn=TurnRef(turn_id="t1", chat_id=7, user_id=7, update_id=1))
    services = cast(TurnServices, None)  # the fakes need none
    outcome = loop.run_turn(start, services, hooks)
    for _ in range(5):
        if isinstance(outcome, loop.Ended):
            return script, outcome
        outcome = loop.resume_turn(outcome, services, hooks)
    raise AssertionError(f"the turn did not end: {script.visited}")


def transitions() -> list[Any]:
    return [pytest.param(edge, id=f"{edge.source}-{edge.how}-{edge.target}") for edge in edges()]


@pytest.mark.parametrize("edge", transitions())
def test_the_loop_makes_every_transition_of_the_asl(monkeypatch: pytest.MonkeyPatch, edge: Edge) -> None:
    path = path_to(edge.source)
    script, ended = drive(monkeypatch, [(e.source, e.how) for e in [*path, edge]])
    expected = [e.source for e in path] + [edge.source]
    if edge.target in STATES:
        expected.append(edge.target)
    assert script.visited[: len(expected)] == expected
    if edge.target == END:
        assert (script.visited[len(expected) :], ended.status) == ([], "SUCCEEDED")
    if edge.target == FAILED:
        assert (script.visited[len(expected) :], ended.status) == ([], "FAILED")


def test_the_loop_and_the_asl_have_the_same_states_and_routes() -> None:
    asl_states = {name for name, state in STATES.items() if state["Type"] != "Choice"}
    assert set(get_args(loop.State)) == asl_states
    assert set(get_args(Route)) == set(choices())
    source = textwrap.dedent(inspect.getsource(loop._Turn.what_next))
    matched = [
        case.pattern.value.value
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Match)
        for case in node.cases
        if isinstance(case.pattern, ast.MatchValue) and isinstance(case.pattern.value, ast.Constant)
    ]
    assert sorted(matched) == sorted(route for route in choices() if route != "reply"), (
        "the loop's match names WhatNext's routes, and its default case is the Choice's Default"
    )


@pytest.mark.parametrize("state", sorted(FUNCTION_OF))
def test_each_state_is_given_what_its_payload_names(monkeypatch: pytest.MonkeyPatch, state: str) -> None:
    path = path_to(state)
    script, _ = drive(monkeypatch, [(e.source, e.how) for e in path])
    payload = set(STATES[state]["Parameters"]["Payload"])
    assert script.inputs[state] == {key.removesuffix(".$") for key in payload}


def test_each_deciding_state_keeps_what_its_result_selector_keeps() -> None:
    for name, state in STATES.items():
        selector = state.get("ResultSelector", {})
        if "route.$" in selector and state.get("ResultPath") == "$.next":
            kept = {key.removesuffix(".$") for key in selector}
            assert kept == set(Next.model_fields), name
    output = CallModelOutput(route="tools", step=2, final=True, waits=1, wait_seconds=3, input_tokens=90)
    assert loop.kept(output).model_dump() == {
        "route": "tools",
        "step": 2,
        "final": True,
        "waits": 1,
        "wait_seconds": 3,
        "approval_id": None,
    }
