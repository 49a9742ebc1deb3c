"""CallModel's routing, RunTools, RequestApproval, presses on the buttons, and the fallback decision."""

from __future__ import annotations

from typing import Any

import pytest
from support.turn_fakes import (
    ScriptedModel,
    text_response,
    tool_use,
    turn_context_text,
    turn_settings,
    turn_start,
)

from stepwise.approvals.lifecycle import (
    DENIED,
    EXPIRED,
    NOT_YOURS,
    PressServices,
    handle_press,
    parse_callback,
)
from stepwise.model.errors import ModelTransientError
from stepwise.services import TurnServices
from stepwise.states.call_model import FALLBACK_NOTE, call_model
from stepwise.states.contracts.base import Next
from stepwise.states.contracts.call_model import CallModelInput
from stepwise.states.contracts.fallback import FallbackInput
from stepwise.states.contracts.finish_turn import FinishTurnInput
from stepwise.states.contracts.request_approval import RequestApprovalInput
from stepwise.states.contracts.run_tools import RunToolsInput
from stepwise.states.fallback import use_fallback
from stepwise.states.finish_turn import finish_turn
from stepwise.states.load_context import load_context
from stepwise.states.request_approval import request_approval
from stepwise.states.run_tools import run_tools
from stepwise.telegram.conversation import Conversation
from stepwise.telegram.models import CallbackQuery
from stepwise.tools.registry import TOO_LONG_TO_SHOW
from stepwise.turn.start import TurnStart
from stepwise_local.in_memory.tasks import InMemoryTaskRepository
from stepwise_local.in_memory.telegram import InMemoryTelegram


class Resumer:
    def __init__(self, alive: bool = True) -> None:
        self.alive, self.resumed = alive, []  # type: ignore[var-annotated]

    def resume(self, task_token: str, output: dict[str, Any]) -> bool:
        self.resumed.append((task_token, output))
        return self.alive


def start(services: TurnServices, text: str = "please") -> TurnStart:
    begin = turn_start(services, text)
    load_context(begin, services)
    return begin


def round_of(services: TurnServices, begin: TurnStart) -> Next:
    """CallModel then RunTools (or RunToolsOrAskApproval, as CallModel routes), as the state machine runs
    them."""
    routed = call_model(CallModelInput(turn=begin.turn), services)
    assert routed.route in ("tools", "tools_with_approval")
    request = RunToolsInput(turn=begin.turn, next=routed, approvals=routed.route == "tools_with_approval")
    return run_tools(request, services)


def resume(services: TurnServices, begin: TurnStart, approval_id: str) -> Next:
    """RunApprovedTools: back from the approval wait."""
    waited = Next(route="approval", step=0, approval_id=approval_id)
    return run_tools(RunToolsInput(turn=begin.turn, next=waited, approvals=True, resume=True), services)


def errors(services: TurnServices, begin: TurnStart, step: int = 0) -> int:
    """How many of the step's tool results are errors."""
    results = services.stores.turns.get_step(begin.turn.turn_id, step).tool_results
    return sum(1 for result in results if result.get("is_error"))


def finish(services: TurnServices, begin: TurnStart) -> None:
    finish_turn(FinishTurnInput(turn=begin.turn), services)


def ask_to_delete(
    services: TurnServices, tasks: InMemoryTaskRepository, model: ScriptedModel, title: str = "buy milk"
) -> tuple[TurnStart, str]:
    """A turn whose model asks to delete task #1 (titled `title`): RunTools stops to wait for approval."""
    tasks.add(7, title, "", "now")
    begin = start(services)
    model.responses.append(tool_use(("delete_task", {"task_id": 1})))
    waiting = round_of(services, begin)
    assert waiting.route == "approval" and waiting.approval_id
    return begin, waiting.approval_id


def show_buttons(services: TurnServices, begin: TurnStart, approval_id: str, token: str = "tok") -> None:
    """RequestApproval for the request, with `token` as the task token."""
    request_approval(
        RequestApprovalInput(turn=begin.turn, approval_id=approval_id, task_token=token), services
    )


def press(
    services: TurnServices,
    telegram: InMemoryTelegram,
    resumer: Resumer,
    approval_id: str,
    choice: str = "a",
    user_id: int = 7,
    data: str | None = None,
    is_bot: bool = False,
) -> str:
    sender = {"id": user_id, "first_name": "U", "is_bot": is_bot}
    data = f"ap:{approval_id}:{choice}" if data is None else data
    query = CallbackQuery.model_validate({"id": "cq1", "from": sender, "data": data})
    presses = PressServices(approvals=services.stores.approvals, telegram=lambda: telegram, resumer=resumer)
    return handle_press(query, presses, frozenset({7, 8})).action


def test_tool_calls_route_to_run_tools_and_results_go_back_in_order(
    services: TurnServices, model: ScriptedModel
) -> None:
    begin = start(services)
    model.responses += [
        tool_use(("add_task", {"title": "a"}), ("add_task", {"title": "b"})),
        text_response("ok"),
    ]
    assert round_of(services, begin).route == "model"
    final = call_model(CallModelInput(turn=begin.turn), services)
    assert final.route == "reply"
    results = [b for b in model.requests[1].messages[-1]["content"] if b["type"] == "tool_result"]
    assert [(r["tool_use_id"], r["content"]) for r in results] == [
        ("toolu_0_add_task", "Added task #1: a"),
        ("toolu_1_add_task", "Added task #2: b"),
    ]
    assert model.requests[0].tools == services.tools.registry.api_tools()


def test_past_max_tool_steps_one_more_call_is_made_with_tools_disabled(
    services: TurnServices, model: ScriptedModel
) -> None:
    services.settings = turn_settings(max_tool_steps=2)
    begin = start(services)
    model.responses += [tool_use(("list_tasks", {}))] * 3 + [text_response("Here is what I did.")]
    round_of(services, begin)
    round_of(services, begin)
    limit = call_model(CallModelInput(turn=begin.turn), services)
    assert (limit.route, limit.final) == ("model", True)
    final = call_model(CallModelInput(turn=begin.turn, next=limit), services)
    assert final.route == "reply"
    request = model.requests[-1]
    assert request.tool_choice == {"type": "none"}
    assert "Tool limit reached" in turn_context_text(request)
    assert "Tool limit reached" not in request.system[0]["text"], "the cached system prompt stays the same"
    assert request.messages[-1]["content"][0]["content"].startswith(
        "Not run: this turn reached its limit of 2"
    )
    assert services.stores.turns.get_reply(begin.turn.turn_id).text == "Here is what I did."  # type: ignore[union-attr]
    outcomes = [(e.tool, e.outcome) for e in services.stores.audit.entries(7)]
    assert outcomes == [("list_tasks", "ok"), ("list_tasks", "ok"), ("list_tasks", "not_run")]


def test_an_approval_needing_call_waits_and_approve_runs_it(
    services: TurnServices, tasks: InMemoryTaskRepository, model: ScriptedModel, telegram: InMemoryTelegram
) -> None:
    tasks.add(7, "buy milk", "", "now")
    begin = start(services)
    model.responses.append(tool_use(("list_tasks", {}), ("delete_task", {"task_id": 1})))
    waiting = round_of(services, begin)
    assert waiting.route == "approval" and waiting.approval_id
    assert tasks.get(7, 1) is not None, "nothing is deleted before the tap"
    show_buttons(services, begin, waiting.approval_id)
    (sent,) = telegram.sent
    assert "The assistant in this chat asks to delete task #1 “buy milk”." in sent.text
    assert sent.reply_markup is not None
    buttons = sent.reply_markup.inline_keyboard[0]
    assert [parse_callback(b.callback_data) for b in buttons] == [
        (waiting.approval_id, "approved"),
        (waiting.approval_id, "denied"),
    ]
    assert all(len((b.callback_data or "").encode()) <= 64 for b in buttons)
    resumer = Resumer()
    assert press(services, telegram, resumer, waiting.approval_id) == "decided"
    assert resumer.resumed == [("tok", {"decision": "approved"})]
    done = resume(services, begin, waiting.approval_id)
    assert done.route == "model"
    assert tasks.get(7, 1) is None
    results = services.stores.turns.get_step(begin.turn.turn_id, 0).tool_results
    assert [r["content"] for r in results] == ["1 task:\n#1 [ ] buy milk", "Deleted task #1: buy milk"]
    audit = services.stores.audit.entries(7)
    assert [(e.tool, e.outcome, e.approval) for e in audit] == [
        ("list_tasks", "ok", "not_needed"),
        ("delete_task", "ok", "approved"),
    ]


@pytest.mark.parametrize(("choice", "message"), [("d", DENIED), (None, EXPIRED)])
def test_deny_or_no_answer_changes_nothing(
    services: TurnServices,
    tasks: InMemoryTaskRepository,
    model: ScriptedModel,
    telegram: InMemoryTelegram,
    choice: str | None,
    message: str,
) -> None:
    begin, approval_id = ask_to_delete(services, tasks, model)
    show_buttons(services, begin, approval_id)
    if choice:
        press(services, telegram, Resumer(), approval_id, choice)
    resume(services, begin, approval_id)
    assert tasks.get(7, 1) is not None
    (result,) = services.stores.turns.get_step(begin.turn.turn_id, 0).tool_results
    assert result == {
        "type": "tool_result",
        "tool_use_id": "toolu_0_delete_task",
        "content": message,
        "is_error": True,
    }
    assert services.stores.approvals.get(approval_id).status == ("denied" if choice else "expired")  # type: ignore[union-attr]
    assert ("Denied" if choice else "No answer in time") in telegram.sent[0].text, (
        "the message shows the outcome"
    )


def test_a_call_that_cannot_succeed_fails_without_asking(
    services: TurnServices, model: ScriptedModel
) -> None:
    begin = start(services)
    model.responses.append(tool_use(("delete_task", {"task_id": 42})))
    outcome = round_of(services, begin)
    assert outcome.route == "model" and errors(services, begin) == 1
    assert services.stores.approvals.requests == {}  # type: ignore[attr-defined]


def test_calls_that_cannot_all_be_shown_are_refused_without_a_card_and_the_chat_told_why(
    services: TurnServices, tasks: InMemoryTaskRepository, model: ScriptedModel, telegram: InMemoryTelegram
) -> None:
    # Eight renames in one round: each call's share of the message cannot hold its two 200-character titles
    # and the words, and only its description may be shortened.
    for n in range(8):
        tasks.add(7, f"old title {n} " + "o" * 186, "", "now")
    begin = start(services)
    update = {"title": "new title " + "n" * 190, "description": "details, " * 200}
    model.responses.append(tool_use(*[("update_task", {"task_id": n + 1, **update}) for n in range(8)]))
    outcome = round_of(services, begin)
    assert outcome.route == "model", "nothing waits for approval"
    assert services.stores.approvals.requests == {}  # type: ignore[attr-defined]
    (line,) = telegram.sent  # one line, no card
    assert line.reply_markup is None and "\n" not in line.text
    assert line.text.startswith(
        "🔐 Not asked, refused: The assistant in this chat wanted to call update_task"
    )
    assert "(8 calls)" in line.text and "cannot all be shown" in line.text
    results = services.stores.turns.get_step(begin.turn.turn_id, 0).tool_results
    assert all(r["is_error"] and r["content"].startswith(TOO_LONG_TO_SHOW) for r in results)
    assert [t.title.startswith("old title") for t in tasks.list(7, "all")] == [True] * 8
    audit = services.stores.audit.entries(7)
    assert {(e.tool, e.outcome, e.approval) for e in audit} == {("update_task", "denied", "unavailable")}
    assert len(audit) == 8 and all(e.result.startswith(TOO_LONG_TO_SHOW) for e in audit)
    run_tools(RunToolsInput(turn=begin.turn, next=outcome.model_copy(update={"route": "tools"})), services)
    assert len(telegram.sent) == 1, "a retried RunTools does not say it again"


def test_a_retried_run_tools_never_runs_a_call_twice(
    services: TurnServices, tasks: InMemoryTaskRepository, model: ScriptedModel
) -> None:
    begin = start(services)
    model.responses.append(tool_use(("add_task", {"title": "once"})))
    again = round_of(services, begin)
    run_tools(RunToolsInput(turn=begin.turn, next=again.model_copy(update={"route": "tools"})), services)
    assert [t.title for t in tasks.list(7, "all")] == ["once"]


def test_presses_that_must_change_nothing(
    services: TurnServices, tasks: InMemoryTaskRepository, model: ScriptedModel, telegram: InMemoryTelegram
) -> None:
    begin, approval_id = ask_to_delete(services, tasks, model)
    resumer = Resumer()
    assert press(services, telegram, resumer, approval_id) == "not_ready", "no token yet"
    show_buttons(services, begin, approval_id)
    assert press(services, telegram, resumer, approval_id, user_id=8) == "not_allowed"
    assert press(services, telegram, resumer, approval_id, user_id=999) == "not_allowed"
    assert press(services, telegram, resumer, "unknown-id") == "ignored"
    assert press(services, telegram, resumer, approval_id, is_bot=True) == "not_allowed", "bots never decide"
    assert press(services, telegram, resumer, approval_id, data=f"ap:{approval_id}:a\n") == "ignored"
    assert press(services, telegram, resumer, approval_id) == "decided"
    assert press(services, telegram, resumer, approval_id, "d") == "already_decided"
    assert len(resumer.resumed) == 1
    answers = [c["text"] for c in telegram.calls_of("answer_callback_query")]
    assert (
        answers[1] == NOT_YOURS and answers[6] == "Approved ✅" and answers[7].startswith("Already decided")
    )


def test_a_press_after_the_turn_stopped_waiting_expires_the_request(
    services: TurnServices, tasks: InMemoryTaskRepository, model: ScriptedModel, telegram: InMemoryTelegram
) -> None:
    begin, approval_id = ask_to_delete(services, tasks, model)
    show_buttons(services, begin, approval_id)
    assert press(services, telegram, Resumer(alive=False), approval_id) == "expired"
    assert services.stores.approvals.get(approval_id).status == "expired"  # type: ignore[union-attr]


def test_a_retried_request_approval_does_not_send_the_buttons_twice(
    services: TurnServices, tasks: InMemoryTaskRepository, model: ScriptedModel, telegram: InMemoryTelegram
) -> None:
    begin, approval_id = ask_to_delete(services, tasks, model)
    for token in ("tok1", "tok2"):
        show_buttons(services, begin, approval_id, token)
    assert len(telegram.sent) == 1
    assert services.stores.approvals.get(approval_id).task_token == "tok2"  # type: ignore[union-attr]


def test_titles_are_escaped_in_the_approval_message(
    services: TurnServices, tasks: InMemoryTaskRepository, model: ScriptedModel, telegram: InMemoryTelegram
) -> None:
    begin, approval_id = ask_to_delete(services, tasks, model, "<b>bold</b> & co")
    show_buttons(services, begin, approval_id, "t")
    assert "&lt;b&gt;bold&lt;/b&gt; &amp; co" in telegram.sent[0].text


def test_the_fallback_takes_over_task_commands_only(
    services: TurnServices, model: ScriptedModel, telegram: InMemoryTelegram
) -> None:
    begin = start(services, "add buy milk")
    model.responses.append(ModelTransientError("overloaded"))
    with pytest.raises(ModelTransientError):
        call_model(CallModelInput(turn=begin.turn), services)
    decide = FallbackInput(turn=begin.turn, error="ModelTransientError")
    assert use_fallback(decide, services).route == "model"
    assert use_fallback(decide, services).route == "model", "a retried decision decides the same"
    round_of(services, begin)
    assert call_model(CallModelInput(turn=begin.turn), services).route == "reply"
    finish(services, begin)
    assert telegram.sent[-1].text.startswith("<i>(My language model is unavailable")
    assert "Added task #1: buy milk" in telegram.sent[-1].text
    assert services.stores.messages.recent(Conversation(7), 5)[-1].content.startswith(FALLBACK_NOTE)


def test_a_rules_model_that_keeps_failing_does_not_loop_through_the_fallback(services: TurnServices) -> None:
    begin = start(services, "add buy milk")
    decisions = [use_fallback(FallbackInput(turn=begin.turn), services).route == "model" for _ in range(5)]
    assert decisions == [True, True, True, False, False]


@pytest.mark.parametrize(("text", "mode"), [("tell me a joke", "rules"), ("add buy milk", "off")])
def test_no_fallback_for_what_the_rules_do_not_understand_or_when_off(
    services: TurnServices, text: str, mode: str
) -> None:
    services.settings = turn_settings(fallback_model=mode)  # type: ignore[arg-type]
    begin = start(services, text)
    assert use_fallback(FallbackInput(turn=begin.turn), services).route == "error"


@pytest.mark.parametrize("command", ["done", "delete"])
def test_the_rules_model_answers_a_task_number_beyond_any_list_clearly(
    services: TurnServices,
    tasks: InMemoryTaskRepository,
    model: ScriptedModel,
    telegram: InMemoryTelegram,
    command: str,
) -> None:
    # Given the model API is down and the user names a 41-digit task number
    huge = "9" * 41
    tasks.add(7, "buy milk", "", "now")
    begin = start(services, f"{command} {huge}")
    model.responses.append(ModelTransientError("overloaded"))
    with pytest.raises(ModelTransientError):
        call_model(CallModelInput(turn=begin.turn), services)
    # When the rules model takes over and its tool round runs
    fallback = use_fallback(FallbackInput(turn=begin.turn, error="ModelTransientError"), services)
    assert fallback.route == "model"
    done = round_of(services, begin)
    # Then the call fails as an error result (no approval asked), and the reply says there is no such task
    assert (done.route, errors(services, begin)) == ("model", 1)
    assert call_model(CallModelInput(turn=begin.turn), services).route == "reply"
    finish(services, begin)
    (reply,) = telegram.texts()
    assert f"There's no task #{huge} on your list." in reply
    assert "Invalid arguments" not in reply and "task_id" not in reply
    assert [(t.task_id, t.status) for t in tasks.list(7, "all")] == [(1, "pending")]
