"""Warm-ups through the real state machine: after a quiet spell the webhook starts CallModel's and
FinishTurn's containers, which the turn then finds warm; a busy chat starts none; a failing or slow warm-up
changes nothing the user sees."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
from support.stack import Stack

from stepwise_local import updates
from stepwise_local.anthropic_server import text, tool_use

QUIET = 1  # seconds: WARMUP_AFTER_QUIET_SECONDS for these tests


@pytest.fixture
def quiet_stack(stack: Stack) -> Iterator[Stack]:
    """Every container gone (as after a long quiet spell), warm-ups after 1 s of quiet."""
    emulation = stack.emulation
    emulation.containers.expire_all()
    emulation.config.env["WARMUP_AFTER_QUIET_SECONDS"] = str(QUIET)
    yield stack
    emulation.config.fail_warmups = False
    emulation.config.warmup_init_seconds = 0.0


def turn_invocations(stack: Stack, execution: dict[str, Any], since: int) -> list[Any]:
    """The invocations since `since` that belong to the execution's turn, or warm it up (no turn id)."""
    name = execution["name"]
    found = []
    for call in stack.emulation.invocations[since:]:
        turn = call.event.get("turn", {}) if isinstance(call.event, dict) else {}
        if call.warmup or turn.get("turn_id") == name:
            found.append(call)
    return found


def say(stack: Stack, user: int, message: str) -> tuple[dict[str, Any], list[Any]]:
    since = len(stack.emulation.invocations)
    execution = stack.say(user, message)
    return execution, turn_invocations(stack, execution, since)


def transitions(stack: Stack, execution: dict[str, Any]) -> int:
    return sum(1 for e in stack.emulation.history(execution["name"]) if e["type"].endswith("StateEntered"))


def test_after_a_quiet_spell_call_model_and_finish_turn_find_warm_containers(quiet_stack: Stack) -> None:
    stack = quiet_stack
    user = stack.new_user()
    stack.anthropic.script(text("Hi!"))
    execution, calls = say(stack, user, "hello")
    # The webhook warmed FinishTurn and CallModel (not RunTools: "hello" needs no tool), each a new container
    warmed = [(c.function, c.cold) for c in calls if c.warmup]
    assert sorted(warmed) == [("CallModelFunction", True), ("FinishTurnFunction", True)]
    # And the turn's own calls found those containers warm; LoadContext could not be warmed
    real = {c.function: c.cold for c in calls if not c.warmup}
    assert real == {"LoadContextFunction": True, "CallModelFunction": False, "FinishTurnFunction": False}
    assert stack.replies(user) == ["Hi!"]
    assert transitions(stack, execution) == 5


def test_a_message_that_reads_like_a_tool_call_warms_run_tools_too(quiet_stack: Stack) -> None:
    stack = quiet_stack
    user = stack.new_user()
    stack.anthropic.script(tool_use(("add_task", {"title": "oat milk"})), text("Added."))
    _, calls = say(stack, user, "add oat milk to my list")
    assert {c.function for c in calls if c.warmup} == {
        "CallModelFunction",
        "FinishTurnFunction",
        "RunToolsFunction",
    }
    assert {c.function: c.cold for c in calls if not c.warmup}["RunToolsFunction"] is False


def test_a_command_warms_only_finish_turn(quiet_stack: Stack) -> None:
    stack = quiet_stack
    user = stack.new_user()
    _, calls = say(stack, user, "/help")
    assert [c.function for c in calls if c.warmup] == ["FinishTurnFunction"]


def test_a_busy_chat_starts_no_warm_ups(quiet_stack: Stack) -> None:
    stack = quiet_stack
    stack.emulation.config.env["WARMUP_AFTER_QUIET_SECONDS"] = "300"
    user = stack.new_user()
    stack.anthropic.script(text("One."), text("Two."))
    _, first = say(stack, user, "hello")
    assert any(c.warmup for c in first)  # the chat's first turn: nothing was warm
    since = len(stack.emulation.invocations)
    stack.say(user, "and again")
    assert not any(c.warmup for c in stack.emulation.invocations[since:])
    assert stack.replies(user) == ["One.", "Two."]


def test_the_chat_is_quiet_again_after_the_setting(quiet_stack: Stack) -> None:
    stack = quiet_stack
    user = stack.new_user()
    stack.anthropic.script(text("One."), text("Two."))
    stack.say(user, "hello")
    time.sleep(QUIET + 0.2)
    since = len(stack.emulation.invocations)
    stack.say(user, "hello again")
    assert any(c.warmup for c in stack.emulation.invocations[since:])


def test_failing_warm_ups_change_nothing_the_user_sees(
    quiet_stack: Stack, caplog: pytest.LogCaptureFixture
) -> None:
    stack = quiet_stack
    stack.emulation.config.fail_warmups = True
    user = stack.new_user()
    stack.anthropic.script(text("Still here."))
    update = updates.text_message(user, "hello")
    response = stack.emulation.post_update(update)
    execution = stack.emulation.wait_for_update(user, update["update_id"])
    assert response["statusCode"] == 200 and execution["status"] == "SUCCEEDED"
    assert stack.replies(user) == ["Still here."]
    warnings = [r for r in caplog.records if "warm-ups failed" in r.getMessage()]
    assert len(warnings) == 1  # one line for both warm-ups


def test_a_warm_up_still_initializing_is_no_help_and_no_harm(quiet_stack: Stack) -> None:
    stack = quiet_stack
    stack.emulation.config.warmup_init_seconds = 60.0  # each warmed container is still starting
    user = stack.new_user()
    stack.anthropic.script(text("Answered anyway."))
    execution, calls = say(stack, user, "hello")
    real = {c.function: c.cold for c in calls if not c.warmup}
    assert real["CallModelFunction"] is True and real["FinishTurnFunction"] is True  # containers of their own
    assert stack.replies(user) == ["Answered anyway."]
    assert transitions(stack, execution) == 5
