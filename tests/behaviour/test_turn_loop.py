"""Whole turns through the turn's loop in code on the in-memory stack: the states each kind of turn visits,
an approval parked on its task token and resumed once by the tap, its timeout, and the fallback when the
model fails."""

from __future__ import annotations

from support.memory_stack import MemoryStack

from stepwise_local.anthropic_server import error, rate_limited, text, tool_use


def test_a_plain_turn_and_a_command_take_the_states_of_the_state_machine(stack: MemoryStack) -> None:
    user = stack.new_user()
    assert stack.say(user, "hello")["states"] == ["LoadContext", "CallModel", "FinishTurn"]
    assert stack.say(user, "/help")["states"] == ["LoadContext", "FinishTurn"]
    stack.anthropic.script(tool_use(("add_task", {"title": "buy milk"})), text("Added."))
    added = stack.say(user, "add buy milk")
    assert added["states"] == ["LoadContext", "CallModel", "RunTools", "CallModel", "FinishTurn"]
    assert stack.replies(user) == ["You said: hello", stack.replies(user)[1], "Added."]


def test_an_approval_parks_the_turn_until_the_tap_resumes_it_once(stack: MemoryStack) -> None:
    user = stack.new_user()
    stack.anthropic.script(tool_use(("add_task", {"title": "buy milk"})), text("Added."))
    stack.say(user, "add buy milk")
    stack.anthropic.script(tool_use(("delete_task", {"task_id": 1})), text("Deleted."))
    asked = stack.say(user, "delete task 1")
    assert asked["status"] == "WAITING"
    assert asked["states"][-2:] == ["RunToolsOrAskApproval", "RequestApproval"]
    assert len(stack.tasks(user)) == 1  # nothing deleted before the tap
    buttons = stack.buttons(user)
    assert stack.press(user, buttons, "Approve")["headers"]["x-stepwise-action"] == "decided"
    done = stack.execution(asked["name"])
    assert (done["status"], done["states"][-3:]) == (
        "SUCCEEDED",
        ["RunApprovedTools", "CallModel", "FinishTurn"],
    )
    assert stack.tasks(user) == [] and stack.replies(user)[-1] == "Deleted."
    stack.press(user, buttons, "Approve")  # a second tap resumes nothing
    assert stack.execution(asked["name"])["states"] == done["states"]


def test_an_approval_that_times_out_is_a_deny(stack: MemoryStack) -> None:
    user = stack.new_user()
    stack.anthropic.script(tool_use(("add_task", {"title": "buy milk"})), text("Added."))
    stack.say(user, "add buy milk")
    stack.anthropic.script(tool_use(("delete_task", {"task_id": 1})), text("Kept it."))
    asked = stack.say(user, "delete task 1")
    assert stack.turns.time_out_approvals() == [asked["name"]]
    stack.drain()
    assert stack.execution(asked["name"])["status"] == "SUCCEEDED"
    assert len(stack.tasks(user)) == 1 and stack.replies(user)[-1] == "Kept it."


def test_a_failing_model_hands_the_turn_to_the_rules_or_to_failturn(stack: MemoryStack) -> None:
    user = stack.new_user()
    stack.anthropic.script(error(500))
    fell_back = stack.say(user, "add eggs to my list")
    assert fell_back["states"][:4] == ["LoadContext", "CallModel", "UseFallback", "CallModel"]
    assert [t["title"] for t in stack.tasks(user)] == ["eggs"]
    stack.anthropic.script(error(500))
    failed = stack.say(user, "what a lovely day")  # the rules do not understand it: the friendly error
    assert failed["states"] == ["LoadContext", "CallModel", "UseFallback", "FailTurn"]
    assert failed["status"] == "SUCCEEDED" and len(stack.replies(user)) == 2


def test_a_rate_limit_is_waited_out_then_the_model_called_again(stack: MemoryStack) -> None:
    user = stack.new_user()
    stack.anthropic.script(rate_limited("7"), text("Now then."))
    turn = stack.say(user, "hello")
    assert turn["states"] == ["LoadContext", "CallModel", "WaitOutTheRateLimit", "CallModel", "FinishTurn"]
    assert stack.replies(user) == ["Now then."]
