"""Tool calls with a side effect make it once: a retried call, even after a crash between the effect and the
recording of its result, changes nothing more and returns the result the first run produced."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pytest
from support.turn_fakes import ScriptedModel, turn_start

from stepwise.ledger.models import CallAlreadyRecorded, Once
from stepwise.memory.vector_index import VectorRecord
from stepwise.model.types import ModelResponse
from stepwise.reminders.models import Reminder
from stepwise.services import TurnServices
from stepwise.states.call_model import call_model
from stepwise.states.contracts.base import Next
from stepwise.states.contracts.call_model import CallModelInput
from stepwise.states.contracts.request_approval import RequestApprovalInput
from stepwise.states.contracts.run_tools import RunToolsInput
from stepwise.states.load_context import load_context
from stepwise.states.request_approval import request_approval
from stepwise.states.run_tools import run_tools
from stepwise.telegram.conversation import Conversation, Scope
from stepwise.tools.catalog import build_registry
from stepwise.tools.registry import ToolContext
from stepwise.turn_records.models import ModelStep
from stepwise_local.in_memory.ledger import InMemoryToolCallLedger
from stepwise_local.in_memory.tasks import InMemoryTaskRepository
from stepwise_local.in_memory.vector_index import InMemoryVectorIndex

if TYPE_CHECKING:
    from stepwise.ledger.store import ToolCallLedger
    from stepwise.tasks.repository import TaskRepository

USER = 7


class Crash(BaseException):
    """The Lambda dying mid-invocation: not an Exception, so nothing in the code catches it."""


@dataclass
class Case:
    """One tool with a side effect: its arguments and result (given the seeded memory id) and its effect."""

    name: str
    args: Callable[[str], dict[str, Any]]
    result: Callable[[str], str]
    effect: Callable[[TurnServices, TaskRepository, str], None]


def _tasks(tasks: TaskRepository) -> list[tuple[int, str, str]]:
    return [(t.task_id, t.title, t.status) for t in tasks.list(USER, "all")]


def _memories(services: TurnServices) -> dict[str, str]:
    assert services.stores.memory is not None
    return {m.key: m.text for m in services.stores.memory.memory.recall(USER, "anything", 20)}


def snapshot(services: TurnServices, tasks: TaskRepository) -> tuple[Any, ...]:
    """Every task field (times included), the user's memories and reminders."""
    reminders = [r.model_dump() for r in services.stores.profiles.reminders.list(USER)]
    return [t.model_dump() for t in tasks.list(USER, "all")], _memories(services), reminders


def _expect_tasks(*expected: tuple[int, str, str]) -> Callable[[TurnServices, TaskRepository, str], None]:
    def check(services: TurnServices, tasks: TaskRepository, memory_id: str) -> None:
        assert _tasks(tasks) == list(expected)

    return check


def _remembered(services: TurnServices, tasks: TaskRepository, memory_id: str) -> None:
    assert sorted(_memories(services).values()) == ["Anna lives in Lisbon", "Likes green tea"]


def _forgotten(services: TurnServices, tasks: TaskRepository, memory_id: str) -> None:
    assert _memories(services) == {}


def _reminders(*expected: tuple[int, str]) -> Callable[[TurnServices, TaskRepository, str], None]:
    def check(services: TurnServices, tasks: TaskRepository, memory_id: str) -> None:
        assert [(r.reminder_id, r.text) for r in services.stores.profiles.reminders.list(USER)] == list(
            expected
        )

    return check


CASES = [
    Case(
        "add_task",
        lambda m: {"title": "call mom"},
        lambda m: "Added task #2: call mom",
        _expect_tasks((1, "buy milk", "pending"), (2, "call mom", "pending")),
    ),
    Case(
        "update_task",
        lambda m: {"task_id": 1, "title": "buy oat milk"},
        lambda m: "Updated task #1: buy oat milk",
        _expect_tasks((1, "buy oat milk", "pending")),
    ),
    Case(
        "complete_task",
        lambda m: {"task_id": 1},
        lambda m: "Completed task #1: buy milk",
        _expect_tasks((1, "buy milk", "completed")),
    ),
    Case("delete_task", lambda m: {"task_id": 1}, lambda m: "Deleted task #1: buy milk", _expect_tasks()),
    Case("remember", lambda m: {"fact": "Likes green tea"}, lambda m: "Remembered (fact-", _remembered),
    Case("forget", lambda m: {"memory_id": m}, lambda m: f"Forgot {m}: Anna lives in Lisbon", _forgotten),
    Case(
        "set_reminder",
        lambda m: {"text": "call mom", "in_minutes": 20},
        lambda m: "Reminder #2 set on ",
        _reminders((1, "water the plants"), (2, "call mom")),
    ),
    Case(
        "cancel_reminder",
        lambda m: {"reminder_id": 1},
        lambda m: "Cancelled reminder #1: water the plants",
        _reminders(),
    ),
]
IDS = [case.name for case in CASES]


def seed(services: TurnServices, tasks: TaskRepository) -> str:
    """Task #1 "buy milk", reminder #1 and one memory of the user; returns the memory's id."""
    assert services.stores.memory is not None
    tasks.add(USER, "buy milk", "", "2026-11-22T08:00:00.000Z")
    services.stores.profiles.reminders.put(
        Reminder(
            user_id=USER,
            chat_id=USER,
            reminder_id=services.stores.profiles.reminders.allocate_id(USER),
            text="water the plants",
            expression="cron(0 9 ? * MON *)",
            timezone="UTC",
            when="every Monday at 09:00 (UTC)",
            one_time=False,
            created_at="2026-11-22T08:00:00.000Z",
        )
    )
    return services.stores.memory.memory.remember(
        USER, USER, "Anna lives in Lisbon", "2026-11-22T08:00:00.000Z"
    )


def call(
    services: TurnServices,
    tasks: TaskRepository,
    name: str,
    args: dict[str, Any],
    call_id: str,
    now: str,
    ledger: ToolCallLedger | None = None,
) -> tuple[str, bool]:
    """One run of a tool call through the registry, as RunTools runs it (with another ledger if given)."""
    context = ToolContext(Scope(Conversation(USER), USER), turn_id="turn", call_id=call_id, now=now)
    registry = services.tools.registry
    if ledger is not None:
        registry = build_registry(tasks=tasks, ledger=ledger, memory=services.stores.memory.memory)
    tool, parsed = registry.parse(name, args)
    result = registry.run(context, tool, parsed)
    return result.content, result.is_error


def test_every_tool_with_a_side_effect_goes_through_the_ledger(services: TurnServices) -> None:
    names = [spec["name"] for spec in services.tools.registry.api_tools()]
    writes = {
        name for name in names if (tool := services.tools.registry.get(name)) is not None and tool.writes
    }
    assert writes == set(IDS)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_the_same_call_run_again_changes_nothing_more_and_returns_the_same_result(
    services: TurnServices, tasks: InMemoryTaskRepository, case: Case
) -> None:
    memory_id = seed(services, tasks)
    first = call(services, tasks, case.name, case.args(memory_id), "turn:toolu_1", "2026-11-22T10:00:00.000Z")
    assert first[0].startswith(case.result(memory_id)) and not first[1]
    after_first = snapshot(services, tasks)
    again = call(services, tasks, case.name, case.args(memory_id), "turn:toolu_1", "2026-11-22T10:05:00.000Z")
    assert again == first
    assert snapshot(services, tasks) == after_first, "the retry (at a later time) changed nothing"
    case.effect(services, tasks, memory_id)


def test_different_calls_make_their_effects_each(
    services: TurnServices, tasks: InMemoryTaskRepository
) -> None:
    for n in (1, 2):
        assert call(services, tasks, "add_task", {"title": "water plants"}, f"turn:toolu_{n}", "now") == (
            f"Added task #{n}: water plants",
            False,
        )
    assert len(tasks.list(USER, "all")) == 2


def test_a_record_made_after_the_look_up_still_wins(
    services: TurnServices, tasks: InMemoryTaskRepository
) -> None:
    """Another attempt of the same call records between the registry's look-up and the store's write."""
    seed(services, tasks)
    assert call(services, tasks, "delete_task", {"task_id": 1}, "turn:toolu_1", "now") == (
        "Deleted task #1: buy milk",
        False,
    )
    unaware = InMemoryToolCallLedger()  # its look-up finds nothing; the store's transaction finds the record
    assert call(services, tasks, "delete_task", {"task_id": 1}, "turn:toolu_1", "now", unaware) == (
        "Deleted task #1: buy milk",
        False,
    )


def test_a_store_refuses_a_call_it_already_recorded() -> None:
    tasks = InMemoryTaskRepository()
    once: Once[Any] = Once("turn:toolu_1", lambda task: f"Added task #{task.task_id}")
    assert tasks.add(USER, "a", "", "now", once=once).task_id == 1
    with pytest.raises(CallAlreadyRecorded) as already:
        tasks.add(USER, "a", "", "now", once=once)
    assert already.value.record.result == "Added task #1" and len(tasks.tasks) == 1
    assert tasks.add(USER, "b", "", "now").task_id == 2, "no id was skipped"


# ---------------------------------------------------------------- through RunTools, with a crash


def tool_use(name: str, args: dict[str, Any], tool_use_id: str = "toolu_0") -> ModelResponse:
    return ModelResponse(
        content=[{"type": "tool_use", "id": tool_use_id, "name": name, "input": args}],
        stop_reason="tool_use",
        model="m",
    )


def crash_after_the_first_effect(services: TurnServices, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Make the first put_step that records a tool result crash (the effect is made, its result not)."""
    crashed: list[str] = []
    put_step = services.stores.turns.put_step

    def crashing(turn_id: str, step: ModelStep) -> None:
        if step.partial_results and not crashed:
            crashed.append(turn_id)
            raise Crash("RunTools died after the tool's effect")
        put_step(turn_id, step)

    monkeypatch.setattr(services.stores.turns, "put_step", crashing)
    return crashed


def run_tools_retried(request: RunToolsInput, services: TurnServices) -> Next:
    """RunTools as the state machine runs it: a crash is retried."""
    try:
        return run_tools(request, services)
    except Crash:
        return run_tools(request, services)


def run_turn_call(
    services: TurnServices, model: ScriptedModel, name: str, args: dict[str, Any], update_id: int = 1
) -> dict[str, Any]:
    """One tool call through CallModel and RunTools (approved when it needs approval); its tool_result."""
    begin = turn_start(services, "please", update_id=update_id)
    load_context(begin, services)
    model.responses.append(tool_use(name, args))
    routed = call_model(CallModelInput(turn=begin.turn), services)
    approvals = routed.route == "tools_with_approval"
    outcome = run_tools_retried(RunToolsInput(turn=begin.turn, next=routed, approvals=approvals), services)
    if outcome.route == "approval":
        assert outcome.approval_id
        request_approval(
            RequestApprovalInput(turn=begin.turn, approval_id=outcome.approval_id, task_token="t"), services
        )
        services.stores.approvals.decide(outcome.approval_id, "approved", "now", USER)
        back = RunToolsInput(turn=begin.turn, next=outcome, approvals=True, resume=True)
        outcome = run_tools_retried(back, services)
    assert outcome.route == "model"
    (result,) = services.stores.turns.get_step(begin.turn.turn_id, 0).tool_results
    return result


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_a_crash_between_the_effect_and_its_recording_makes_the_effect_once(
    services: TurnServices,
    tasks: InMemoryTaskRepository,
    model: ScriptedModel,
    monkeypatch: pytest.MonkeyPatch,
    case: Case,
) -> None:
    memory_id = seed(services, tasks)
    crashed = crash_after_the_first_effect(services, monkeypatch)
    result = run_turn_call(services, model, case.name, case.args(memory_id))
    assert crashed, "RunTools crashed once, after the effect"
    assert result["content"].startswith(case.result(memory_id)) and not result["is_error"]
    case.effect(services, tasks, memory_id)
    audit = [(e.tool, e.outcome) for e in services.stores.audit.entries(USER)]
    assert audit == [(case.name, "ok")], "one audit entry for the call"


@pytest.mark.parametrize(("name", "operation"), [("remember", "put"), ("forget", "delete")])
def test_a_crash_between_a_memory_intent_and_its_effect_makes_the_effect_on_the_retry(
    services: TurnServices,
    tasks: InMemoryTaskRepository,
    ledger: InMemoryToolCallLedger,
    model: ScriptedModel,
    monkeypatch: pytest.MonkeyPatch,
    name: str,
    operation: str,
) -> None:
    memory_id = seed(services, tasks)
    case = next(c for c in CASES if c.name == name)
    original = getattr(InMemoryVectorIndex, operation)
    crashed: list[bool] = []

    def crash_once(index: InMemoryVectorIndex, items: Sequence[VectorRecord | str]) -> None:
        if not crashed:
            crashed.append(True)
            raise Crash("RunTools died after recording the intent")
        original(index, items)

    monkeypatch.setattr(InMemoryVectorIndex, operation, crash_once)
    result = run_turn_call(services, model, name, case.args(memory_id))
    assert crashed and result["content"].startswith(case.result(memory_id))
    (record,) = ledger.records.values()  # type: ignore[attr-defined]
    assert (record.kind, record.result) == ("intent", result["content"])
    case.effect(services, tasks, memory_id)


def test_the_same_tool_use_id_in_another_turn_is_another_call(
    services: TurnServices, tasks: InMemoryTaskRepository, model: ScriptedModel
) -> None:
    """Offline-model ids can repeat across turns: the ledger key is scoped to the turn."""
    first = run_turn_call(services, model, "add_task", {"title": "water plants"}, update_id=1)
    second = run_turn_call(services, model, "add_task", {"title": "water plants"}, update_id=2)
    assert (first["content"], second["content"]) == (
        "Added task #1: water plants",
        "Added task #2: water plants",
    )
    assert len(tasks.list(USER, "all")) == 2
