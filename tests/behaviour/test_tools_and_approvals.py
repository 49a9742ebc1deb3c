"""Tools, the tool loop, approvals and the fallback on the in-memory stack (support.memory_stack): a tool
round trip with its audit entry; exactly MAX_TOOL_STEPS rounds; two tool_use blocks in order; another
user's tasks out of reach; Approve, Deny, a timeout, a double press and presses by others; titles shown
escaped on the card; calls too long to show refused with one line; a tool that raises; the rules model
standing in while the model API is down, and the friendly error otherwise; task numbers beyond any list.
The emulated stack keeps the wiring of a tool round, of an approval resumed by its task token, the ASL's own
approval timeout and its Catch from CallModel to UseFallback
(tests/integration/test_tools_and_approvals.py)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from support.memory_stack import NOT_ALLOWED_USER, MemoryStack

from stepwise.model.errors import ModelTransientError
from stepwise.states.call_model import FALLBACK_NOTE
from stepwise.states.deliver import FRIENDLY_ERROR
from stepwise_local.anthropic_server import Scripted, error, text, tool_use
from stepwise_local.in_memory.tasks import InMemoryTaskRepository


def tool_results(request: dict[str, Any]) -> list[dict[str, Any]]:
    """The tool_result blocks a request sends back (its last message)."""
    return [b for b in request["messages"][-1]["content"] if b.get("type") == "tool_result"]


def seed_task(stack: MemoryStack, user: int, title: str) -> None:
    stack.task_store.add(user, title, "", "2026-11-22T10:00:00.000Z")


def test_a_tool_round_trip_adds_the_task_for_that_user_and_confirms_it(stack: MemoryStack) -> None:
    user = stack.new_user()
    stack.anthropic.script(
        tool_use(("add_task", {"title": "buy milk"})), text("Added **buy milk** to your list.")
    )
    execution = stack.say(user, "remind me to buy milk")
    assert execution["status"] == "SUCCEEDED"
    assert [(t["task_id"], t["title"], t["status"]) for t in stack.tasks(user)] == [
        (1, "buy milk", "pending")
    ]
    assert stack.replies(user) == ["Added buy milk to your list."]
    (result,) = tool_results(stack.anthropic.requests[1])
    assert result["content"] == "Added task #1: buy milk" and result["is_error"] is False
    assert [t["name"] for t in stack.anthropic.requests[0]["tools"]][:2] == ["add_task", "list_tasks"]
    # the stored assistant message carries the turn's tool calls, and the audit log has the call
    assistant = stack.stored(user)[-1]
    assert [call["name"] for call in json.loads(assistant["tool_calls"])] == ["add_task"]
    (entry,) = stack.audited(user)
    assert (entry["tool"], entry["outcome"], entry["approval"]) == ("add_task", "ok", "not_needed")
    assert json.loads(entry["arguments"]) == {"title": "buy milk"} and entry["created_at"]


def test_a_model_that_wants_tools_forever_gets_exactly_max_tool_steps_rounds_and_one_reply(
    stack: MemoryStack,
) -> None:
    user = stack.new_user()

    def insist(request: dict[str, Any]) -> Scripted:
        if request.get("tool_choice") == {"type": "none"}:
            return text("I checked your list five times; it is empty.")
        return tool_use(("list_tasks", {"status": "all"}))

    stack.anthropic.default = insist
    execution = stack.say(user, "check my list thoroughly")
    assert execution["status"] == "SUCCEEDED"
    assert execution["states"].count("RunTools") == 5
    assert len(stack.anthropic.requests) == 7, "5 rounds, the 6th request asked again, then the final call"
    final = stack.anthropic.requests[-1]
    assert final["tool_choice"] == {"type": "none"}
    assert "Not run: this turn reached its limit of 5 tool rounds." in json.dumps(final["messages"][-1])
    assert stack.replies(user) == ["I checked your list five times; it is empty."]
    audit = stack.audited(user)
    assert sorted(entry["outcome"] for entry in audit) == ["not_run"] + ["ok"] * 5, "every call is audited"


def test_the_limit_follows_max_tool_steps() -> None:
    stack = MemoryStack(env={"MAX_TOOL_STEPS": "2"})
    user = stack.new_user()
    stack.anthropic.default = lambda r: text("done") if r.get("tool_choice") else tool_use(("list_tasks", {}))
    execution = stack.say(user, "go")
    assert execution["states"].count("RunTools") == 2 and stack.replies(user) == ["done"]


def test_two_tool_uses_in_one_response_both_run_and_their_results_return_in_order(stack: MemoryStack) -> None:
    user = stack.new_user()
    stack.anthropic.script(
        tool_use(("add_task", {"title": "first"}), ("add_task", {"title": "second"})), text("Both added.")
    )
    stack.say(user, "add first and second")
    # the ids come from the scripted response:
    uses = [b for b in stack.anthropic.requests[1]["messages"][-2]["content"] if b["type"] == "tool_use"]
    results = tool_results(stack.anthropic.requests[1])
    assert [r["tool_use_id"] for r in results] == [u["id"] for u in uses]
    assert [r["content"] for r in results] == ["Added task #1: first", "Added task #2: second"]
    assert [t["title"] for t in stack.tasks(user)] == ["first", "second"]


def test_nothing_the_model_sends_reaches_another_users_tasks(stack: MemoryStack) -> None:
    victim, user = stack.new_user(), stack.new_user()
    seed_task(stack, victim, "victim's task")
    stack.anthropic.script(
        tool_use(
            ("delete_task", {"task_id": 1}),
            ("list_tasks", {"status": "all", "user_id": victim}),
            ("add_task", {"title": "sneaky", "user_id": victim}),
            ("get_task", {"task_id": 1}),
        ),
        text("I couldn't do that."),
    )
    execution = stack.say(user, "delete task 1 of the other user")
    assert execution["status"] == "SUCCEEDED"
    results = tool_results(stack.anthropic.requests[1])
    assert all(r["is_error"] for r in results)
    assert "There is no task #1" in results[0]["content"] and "user_id" in results[1]["content"]
    assert [t["title"] for t in stack.tasks(victim)] == ["victim's task"]
    assert stack.tasks(user) == []
    assert not any(m.get("reply_markup") for m in stack.telegram.messages(user)), (
        "no approval for a doomed call"
    )


def delete_with_approval(stack: MemoryStack, user: int) -> tuple[str, dict[str, Any]]:
    seed_task(stack, user, "buy milk")
    stack.anthropic.script(tool_use(("delete_task", {"task_id": 1})), text("Done as you decided."))
    name = stack.send(user, "delete the milk task")
    return name, stack.buttons(user)


def test_approve_deletes_and_shows_the_decision(stack: MemoryStack) -> None:
    user = stack.new_user()
    name, message = delete_with_approval(stack, user)
    assert stack.telegram.text_of(message).splitlines()[:2] == [
        "🔐 Approval needed",
        "The assistant in this chat asks to delete task #1 “buy milk”.",
    ], "the request names who asks before the tap"
    assert stack.execution(name)["status"] == "WAITING", "the turn waits for the tap"
    assert [t["title"] for t in stack.tasks(user)] == ["buy milk"]
    answers_before = len(stack.telegram.calls("answerCallbackQuery"))
    answer = stack.press(user, message, "Approve")
    assert json.loads(answer["body"])["action"] == "decided"
    assert stack.execution(name)["status"] == "SUCCEEDED"
    assert stack.tasks(user) == []
    (result,) = tool_results(stack.anthropic.requests[1])
    assert result["content"] == "Deleted task #1: buy milk"
    (answered,) = stack.telegram.calls("answerCallbackQuery")[answers_before:]
    assert answered["params"]["text"] == "Approved ✅"
    edited = stack.telegram.messages(user)[0]
    assert "✅ Approved" in stack.telegram.text_of(edited) and not edited.get("reply_markup")
    assert stack.replies(user)[-1] == "Done as you decided."


def test_a_title_with_a_line_separator_or_bidi_override_is_shown_escaped_on_the_card(
    stack: MemoryStack,
) -> None:
    user = stack.new_user()
    seed_task(stack, user, "milk\u2028Approve: delete nothing\u202egnirts")
    stack.anthropic.script(tool_use(("delete_task", {"task_id": 1})), text("Kept."))
    name = stack.send(user, "delete the milk task")
    message = stack.buttons(user)
    shown = stack.telegram.text_of(message)
    assert shown.splitlines()[1] == (
        "The assistant in this chat asks to delete task #1 “milk\\u2028Approve: delete nothing\\u202egnirts”."
    )
    assert "\u2028" not in shown and "\u202e" not in shown
    stack.press(user, message, "Deny")
    assert stack.execution(name)["status"] == "SUCCEEDED"


def test_deny_changes_nothing_and_the_model_hears_denied_by_the_user(stack: MemoryStack) -> None:
    user = stack.new_user()
    name, message = delete_with_approval(stack, user)
    stack.press(user, message, "Deny")
    assert stack.execution(name)["status"] == "SUCCEEDED"
    assert [t["title"] for t in stack.tasks(user)] == ["buy milk"]
    (result,) = tool_results(stack.anthropic.requests[1])
    assert result["is_error"] and "Denied by the user" in result["content"]
    assert "❌ Denied" in stack.telegram.text_of(stack.telegram.messages(user)[0])


def test_no_answer_within_the_timeout_counts_as_deny() -> None:
    stack = MemoryStack(env={"APPROVAL_TIMEOUT_SECONDS": "1"})
    user = stack.new_user()
    name, message = delete_with_approval(stack, user)
    assert "No answer within 1 second counts as Deny." in stack.telegram.text_of(message)
    assert stack.turns.time_out_approvals() == [name]
    stack.drain()
    assert stack.execution(name)["status"] == "SUCCEEDED"
    assert [t["title"] for t in stack.tasks(user)] == ["buy milk"]
    (result,) = tool_results(stack.anthropic.requests[1])
    assert "did not answer the approval request in time" in result["content"]
    assert "No answer in time" in stack.telegram.text_of(stack.telegram.messages(user)[0])
    late = stack.press(user, message, "Approve")  # a press after the timeout changes nothing
    assert json.loads(late["body"])["action"] == "already_decided"
    assert [t["title"] for t in stack.tasks(user)] == ["buy milk"]


def test_calls_too_long_to_show_whole_are_refused_with_one_line_and_no_card(stack: MemoryStack) -> None:
    # Given eight tasks with long titles, and a model renaming them all in one round: each call's share of the
    # request cannot hold both titles and the words, and only the description may be shortened
    user = stack.new_user()
    for n in range(8):
        seed_task(stack, user, f"old title {n} " + "o" * 186)
    update = {"title": "new title " + "n" * 190, "description": "details, " * 200}
    stack.anthropic.script(
        tool_use(*[("update_task", {"task_id": n + 1, **update}) for n in range(8)]),
        text("I could not ask you about those changes."),
    )
    # When the turn runs, it does not wait for a tap: nothing is asked
    assert stack.say(user, "rename them all")["status"] == "SUCCEEDED"
    # Then the chat gets one line saying why, no card with buttons, and then the model's reply
    messages = stack.telegram.messages(user)
    assert not any(m.get("reply_markup") for m in messages), "no approval card"
    (line,) = [stack.telegram.text_of(m) for m in messages if "Not asked" in stack.telegram.text_of(m)]
    assert line.startswith("🔐 Not asked, refused: The assistant in this chat wanted to call update_task")
    assert "\n" not in line
    assert stack.replies(user)[-1] == "I could not ask you about those changes."
    results = tool_results(stack.anthropic.requests[1])
    assert len(results) == 8 and all(
        r["is_error"] and "never approved unseen" in r["content"] for r in results
    )
    assert all(t["title"].startswith("old title") for t in stack.tasks(user)), "nothing changed"
    entries = stack.audited(user)
    assert (
        sorted((e["tool"], e["outcome"], e["approval"]) for e in entries)
        == [("update_task", "denied", "unavailable")] * 8
    )
    assert [r for r in stack.approvals.requests.values() if r.user_id == user] == []


def test_a_double_press_decides_once(stack: MemoryStack) -> None:
    user = stack.new_user()
    name, message = delete_with_approval(stack, user)
    first = stack.press(user, message, "Approve")
    second = stack.press(user, message, "Deny")
    assert stack.execution(name)["status"] == "SUCCEEDED"
    assert [json.loads(r["body"])["action"] for r in (first, second)] == ["decided", "already_decided"]
    assert stack.tasks(user) == []
    assert len(stack.anthropic.requests) == 2


@pytest.mark.parametrize("presser", ["other allowlisted user", "stranger"])
def test_a_press_by_someone_else_is_answered_politely_and_changes_nothing(
    stack: MemoryStack, presser: str
) -> None:
    user = stack.new_user()
    other = stack.new_user() if presser == "other allowlisted user" else NOT_ALLOWED_USER
    name, message = delete_with_approval(stack, user)
    answer = stack.press(other, message, "Approve")
    assert answer["statusCode"] == 200 and json.loads(answer["body"])["action"] == "not_allowed"
    assert stack.execution(name)["status"] == "WAITING"
    assert [t["title"] for t in stack.tasks(user)] == ["buy milk"]
    stack.press(user, message, "Deny")
    assert stack.execution(name)["status"] == "SUCCEEDED"
    assert [t["title"] for t in stack.tasks(user)] == ["buy milk"]


def test_a_tool_that_raises_returns_an_error_result_and_the_turn_still_replies(
    stack: MemoryStack, monkeypatch: pytest.MonkeyPatch
) -> None:
    user = stack.new_user()

    def broken_add(*args: object, **kwargs: object) -> None:
        raise RuntimeError("the disk is on fire")

    monkeypatch.setattr(InMemoryTaskRepository, "add", broken_add)
    stack.anthropic.script(tool_use(("add_task", {"title": "buy milk"})), text("Sorry, saving failed."))
    execution = stack.say(user, "add buy milk")
    assert execution["status"] == "SUCCEEDED"
    (result,) = tool_results(stack.anthropic.requests[1])
    assert result["is_error"] and "failed unexpectedly" in result["content"]
    assert stack.replies(user) == ["Sorry, saving failed."]


def test_when_the_model_api_is_down_the_rules_model_handles_task_commands(
    stack: MemoryStack, caplog: pytest.LogCaptureFixture
) -> None:
    user = stack.new_user()
    stack.anthropic.always(error(503, "api_error"))
    execution = stack.say(user, "add buy milk")
    assert execution["status"] == "SUCCEEDED"
    assert execution["states"][:3] == ["LoadContext", "CallModel", "UseFallback"]
    assert [t["title"] for t in stack.tasks(user)] == ["buy milk"]
    (reply,) = stack.replies(user)
    assert reply.startswith("(My language model is unavailable") and "Added task #1: buy milk" in reply
    assert stack.stored(user)[-1]["content"].startswith(FALLBACK_NOTE)
    assert f"CallModel failed: {ModelTransientError.__name__}" in caplog.text, (
        "the error CallModel's Catch kept"
    )


def test_when_the_model_api_is_down_a_task_named_by_its_words_is_completed_by_the_rules(
    stack: MemoryStack,
) -> None:
    # Given two tasks, and a model API that keeps failing
    user = stack.new_user()
    seed_task(stack, user, "buy milk")
    seed_task(stack, user, "call mom")
    stack.anthropic.always(error(503, "api_error"))
    # When the user names one by its words
    execution = stack.say(user, "done call mom")
    # Then the rules take the turn over, read the list, and complete that task (and only it)
    assert execution["status"] == "SUCCEEDED"
    assert [(t["title"], t["status"]) for t in stack.tasks(user)] == [
        ("buy milk", "pending"),
        ("call mom", "completed"),
    ]
    (reply,) = stack.replies(user)
    assert reply.startswith("(My language model is unavailable") and "Completed task #2: call mom" in reply


@pytest.mark.parametrize(("message", "fallback"), [("tell me a joke", "rules"), ("add buy milk", "off")])
def test_otherwise_the_friendly_error_stands(message: str, fallback: str) -> None:
    stack = MemoryStack(env={"FALLBACK_MODEL": fallback})
    user = stack.new_user()
    stack.anthropic.always(error(500))
    stack.say(user, message)
    assert stack.replies(user) == [FRIENDLY_ERROR]
    assert stack.tasks(user) == []


def test_task_numbers_beyond_any_list_come_back_as_error_results_not_failures(stack: MemoryStack) -> None:
    # Given a user with one task, and a model asking for task numbers DynamoDB could not even store
    user = stack.new_user()
    seed_task(stack, user, "buy milk")
    huge = 10**40
    stack.anthropic.script(
        tool_use(
            ("get_task", {"task_id": huge}),
            ("complete_task", {"task_id": huge}),
            ("delete_task", {"task_id": huge}),
            ("update_task", {"task_id": huge, "title": "x"}),
        ),
        text("There is no such task."),
    )
    # When the turn runs
    execution = stack.say(user, "finish task 10^40")
    # Then every call is an is_error result the model explains, nothing asks for approval, nothing changes
    assert execution["status"] == "SUCCEEDED"
    results = tool_results(stack.anthropic.requests[1])
    assert [r["is_error"] for r in results] == [True] * 4
    assert all(f"there is no task #{huge}" in r["content"] for r in results)
    assert stack.replies(user) == ["There is no such task."]
    assert [(t["title"], t["status"]) for t in stack.tasks(user)] == [("buy milk", "pending")]
    # And the offline rules model, standing in while the model API is down, answers the same clearly
    stack.anthropic.always(error(503, "api_error"))
    execution = stack.say(user, f"done {'9' * 41}")
    assert execution["status"] == "SUCCEEDED"
    reply = stack.replies(user)[-1]
    assert (
        reply.startswith("(My language model is unavailable")
        and f"There's no task #{'9' * 41} on your list" in reply
    )
