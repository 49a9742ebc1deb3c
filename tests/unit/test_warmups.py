"""Warm-ups: which functions a started turn warms, sending them concurrently within a bound, and handlers
that answer a warm-up before any logic."""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime, timedelta
from typing import Any

import boto3
import pytest
from support.fresh_python import run_fresh

from stepwise.aws.lazy_client import LazyClient
from stepwise.warmups.event import WARMED, WARMUP_EVENT, answers_warmups, is_warmup
from stepwise.warmups.warmer import LambdaWarmer, Warmups, WarmupTargets, forget_container

TARGETS = WarmupTargets("CallModel", "FinishTurn", "RunTools")


def warmups(invoke: Any = lambda _f: None, **kwargs: Any) -> Warmups:
    return Warmups(TARGETS, invoke, **kwargs)


@pytest.mark.parametrize(
    ("idle", "text", "command", "expected"),
    [
        (None, "hello", False, ["FinishTurn", "CallModel"]),  # the chat's first turn
        (301, "hello", False, ["FinishTurn", "CallModel"]),
        (299, "hello", False, []),  # busy: its containers are most likely warm
        (3600, "add oat milk", False, ["FinishTurn", "CallModel", "RunTools"]),
        (3600, "Remind me at 5 to call mom", False, ["FinishTurn", "CallModel", "RunTools"]),
        (3600, "/tasks", True, ["FinishTurn"]),  # answered without the model
    ],
)
def test_what_a_started_turn_warms(idle: int | None, text: str, command: bool, expected: list[str]) -> None:
    assert warmups(quiet_seconds=300).wanted(idle, text, command) == expected


def test_warm_ups_off_warm_nothing() -> None:
    assert warmups(quiet_seconds=0).wanted(None, "hello", False) == []


def test_warm_ups_run_concurrently_and_the_wait_is_bounded(caplog: pytest.LogCaptureFixture) -> None:
    started: list[str] = []
    release = threading.Event()

    def slow(function: str) -> None:
        started.append(function)
        release.wait(5)

    begin = time.monotonic()
    warmups(slow, timeout_seconds=0.1).send(["CallModel", "FinishTurn"])
    waited = time.monotonic() - begin
    release.set()
    assert sorted(started) == ["CallModel", "FinishTurn"]  # both were sent, not one after the other
    assert (
        waited < 1.0
    )  # bounded by the time-out, not by the slow answers (a generous bound, not a timing test)
    (line,) = [r for r in caplog.records if "warm-ups failed or were slow" in r.getMessage()]
    assert sorted(line.not_answered_in_time) == ["CallModel", "FinishTurn"]


def test_the_warm_ups_sent_are_logged_at_debug(caplog: pytest.LogCaptureFixture) -> None:
    from stepwise.warmups import warmer

    caplog.set_level("DEBUG", logger=warmer.logger.name)
    warmups().send(["CallModel", "FinishTurn"])
    (line,) = [r for r in caplog.records if r.getMessage() == "warm-ups started"]
    assert line.levelname == "DEBUG" and line.functions == ["CallModel", "FinishTurn"]


def test_failures_are_logged_once_and_never_raised(caplog: pytest.LogCaptureFixture) -> None:
    def failing(function: str) -> None:
        raise ConnectionError(f"no {function}")

    warmups(failing).send(["CallModel", "FinishTurn"])
    lines = [r for r in caplog.records if "warm-ups failed" in r.getMessage()]
    assert len(lines) == 1


def test_a_handler_answers_a_warm_up_before_any_logic() -> None:
    calls: list[Any] = []
    prepared: list[bool] = []

    @answers_warmups(prepare=lambda: prepared.append(True))
    def handler(event: Any, context: Any) -> Any:
        calls.append(event)
        return {"route": "reply"}

    assert handler(dict(WARMUP_EVENT), None) == WARMED
    assert calls == [] and prepared == [True]  # prepared (clients, validators), no logic
    assert handler({"turn": {}}, None) == {"route": "reply"} and len(calls) == 1 and len(prepared) == 1


@pytest.mark.parametrize(
    "function", ["load_context", "call_model", "run_tools", "request_approval", "finish_turn"]
)
def test_a_state_lists_the_models_its_first_call_uses_and_a_warm_up_builds_them(function: str) -> None:
    # Given a fresh interpreter that imported the state's handler (no model is built by an import)
    code = f"""
import importlib.util
from pydantic import BaseModel
from stepwise.lambda_support import build_models, model_at
spec = importlib.util.spec_from_file_location("app", "functions/{function}/app.py")
app = importlib.util.module_from_spec(spec); spec.loader.exec_module(app)
found = [model_at(path) for path in app.FIRST_CALL_MODELS]
print(all(isinstance(c, type) and issubclass(c, BaseModel) for c in found), len(found))
print(sum(bool(c.__dict__.get("__pydantic_complete__")) for c in found))
build_models(app.FIRST_CALL_MODELS)
print(all(c.__dict__.get("__pydantic_complete__") for c in found))
"""
    # When the warm-up's step that builds the listed models runs
    listed, before, after = run_fresh(code, timeout=120).split("\n")[:3]
    # Then every entry names a pydantic model, none was built by the import, and all are built after it
    assert listed.startswith("True") and int(listed.split()[1]) >= 4
    assert before == "0" and after == "True"


def test_a_warm_up_whose_preparation_fails_still_answers(caplog: pytest.LogCaptureFixture) -> None:
    def broken() -> None:
        raise RuntimeError("STATE_MACHINE_ARN is not configured")

    handler = answers_warmups(prepare=broken)(lambda event, context: {"route": "reply"})
    assert handler(dict(WARMUP_EVENT), None) == WARMED
    assert "warm-up could not prepare" in caplog.text


@pytest.mark.parametrize("event", [{"stepwise_warmup": "yes"}, {"turn": {"stepwise_warmup": True}}, [], None])
def test_only_the_exact_warm_up_event_is_one(event: Any) -> None:
    assert not is_warmup(event)


def test_the_lambda_warmer_invokes_asynchronously_with_one_client(monkeypatch: pytest.MonkeyPatch) -> None:
    made: list[Any] = []

    class Client:
        def __init__(self) -> None:
            self.calls: list[dict[str, Any]] = []

        def invoke(self, **kwargs: Any) -> None:
            self.calls.append(kwargs)

    def factory(service: str, **options: Any) -> Client:
        assert service == "lambda"
        made.append(Client())
        return made[-1]

    monkeypatch.setattr(boto3, "client", factory)
    warmer = LambdaWarmer(LazyClient("lambda"))
    warmer("CallModel")
    warmer("FinishTurn")
    assert len(made) == 1
    assert [c["InvocationType"] for c in made[0].calls] == ["Event", "Event"]
    assert made[0].calls[0]["FunctionName"] == "CallModel"


def test_the_container_was_quiet_when_new_or_after_the_setting() -> None:
    forget_container()
    quiet = warmups(quiet_seconds=300)
    noon = datetime(2026, 11, 25, 12, 0, tzinfo=UTC)
    assert quiet.container_was_quiet(noon)  # a new container: the stack was quiet
    assert not quiet.container_was_quiet(noon + timedelta(seconds=299))  # a request a moment ago
    assert quiet.container_was_quiet(noon + timedelta(seconds=599))  # 300 s since the last one
    forget_container()
    assert not warmups(quiet_seconds=0).container_was_quiet(noon)  # warm-ups off
