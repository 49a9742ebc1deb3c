"""Background jobs on in-memory ports: spawn_job (numbering, once per call, MAX_JOBS, no jobs from jobs), a
job's own run (its task only, its tools, its limits, deadline and budget), its report (text, once, in the
chat's inbox), /jobs, and the offline phrasing."""

from __future__ import annotations

from datetime import timedelta

import pytest
from support.turn_fakes import (
    RecordingStarter,
    ScriptedModel,
    drive_turn,
    text_response,
    tool_use,
    turn_meta,
    turn_settings,
    turn_start,
)

from stepwise.commands.handlers import CommandRequest
from stepwise.commands.jobs import jobs as jobs_command
from stepwise.inbox.models import JobEnded
from stepwise.jobs.models import Job, job_execution_name
from stepwise.ledger.models import tool_call_id
from stepwise.model.types import ModelRequest
from stepwise.offline.api import OfflineModel, job_intent
from stepwise.services import Tools, TurnServices
from stepwise.states.contracts.finish_turn import FinishTurnInput
from stepwise.states.job_report import Ending, job_outcome, report_job, report_text, what_was_done
from stepwise.states.job_turn import JOB_TURN, job_must_stop, start_job
from stepwise.states.loop import Ended, Hooks, run_turn
from stepwise.states.policy import CHAT_TURN
from stepwise.telegram.conversation import Conversation, Scope
from stepwise.tools.catalog import build_registry
from stepwise.tools.job_tools import JobSetup
from stepwise.tools.registry import ToolContext
from stepwise.turn.ids import iso_utc
from stepwise.turn.ref import TurnRef
from stepwise.turn.start import TurnStart
from stepwise.turn_records.models import ModelStep, Reply
from stepwise_local.in_memory.jobs import InMemoryJobStore
from stepwise_local.in_memory.ledger import InMemoryToolCallLedger
from stepwise_local.in_memory.tasks import InMemoryTaskRepository
from stepwise_local.in_memory.telegram import InMemoryTelegram


@pytest.fixture
def store() -> InMemoryJobStore:
    return InMemoryJobStore()


@pytest.fixture
def job_starter() -> RecordingStarter:
    return RecordingStarter()


@pytest.fixture
def with_jobs(
    services: TurnServices,
    store: InMemoryJobStore,
    job_starter: RecordingStarter,
    tasks: InMemoryTaskRepository,
    ledger: InMemoryToolCallLedger,
) -> TurnServices:
    """The turn's services with spawn_job bound to an in-memory jobs' store (MAX_JOBS 2, 15 minutes)."""
    services.settings = turn_settings(max_jobs=2, job_timeout_minutes=15)
    setup = JobSetup(jobs=store, starter=lambda: job_starter, limits=services.settings.limits.jobs)
    registry = build_registry(tasks=tasks, ledger=ledger, jobs=setup)
    services.tools = Tools(built_in=lambda: registry)
    services.stores.jobs = store
    return services


def spawn_in_turn(services: TurnServices, model: ScriptedModel, task: str = "Add buy milk.") -> TurnStart:
    model.responses += [
        tool_use(("spawn_job", {"task": task, "title": "Milk"})),
        text_response("I started a job for that."),
    ]
    start = turn_start(services, "do it in the background")
    drive_turn(services, start)
    return start


def job_start(starter: RecordingStarter, number: int = 1) -> TurnStart:
    (payload,) = [p for p in starter.started.values() if p["turn"].get("job") == number]
    return TurnStart.model_validate(payload)


def test_spawn_job_starts_one_execution_named_after_the_call_and_the_turn_answers_at_once(
    with_jobs: TurnServices, model: ScriptedModel, store: InMemoryJobStore, job_starter: RecordingStarter
) -> None:
    spawn_in_turn(with_jobs, model)
    name = job_execution_name(tool_call_id("turn-1", "toolu_0_spawn_job"))
    assert list(job_starter.started) == [name]
    start = job_start(job_starter)
    assert start.turn == TurnRef(turn_id=name, chat_id=7, user_id=7, update_id=0, job=1)
    assert start.limits is not None and start.limits.approval_timeout_seconds == 900
    job = store.get(7, 1)
    assert job is not None and job.running and job.title == "Milk" and job.task == "Add buy milk."
    result = model.requests[1].messages[-1]["content"][0]
    assert result["content"].startswith("Started background job #1 “Milk”: it works on its own")
    assert result["is_error"] is False


def test_a_retried_spawn_starts_the_same_job_with_the_same_number(
    with_jobs: TurnServices, store: InMemoryJobStore, job_starter: RecordingStarter
) -> None:
    registry = with_jobs.tools.registry
    tool, args = registry.parse("spawn_job", {"task": "t", "title": "T"})
    context = ToolContext(
        Scope(Conversation(7), 7), turn_id="turn-9", call_id="turn-9:toolu_a", now=iso_utc(with_jobs.clock())
    )
    first = registry.run(context, tool, args)
    job_starter.started.clear()  # as if the start had not been seen: the retry starts the same name again
    again = registry.run(context, tool, args)
    assert first == again
    assert list(job_starter.started) == [job_execution_name("turn-9:toolu_a")]
    assert [job.number for job in store.recent(7)] == [1]


def test_past_max_jobs_spawn_job_is_an_error_and_takes_no_number(
    with_jobs: TurnServices, store: InMemoryJobStore
) -> None:
    registry = with_jobs.tools.registry
    tool, args = registry.parse("spawn_job", {"task": "t", "title": "T"})
    for n in range(3):
        context = ToolContext(
            Scope(Conversation(7), 7),
            turn_id="turn-1",
            call_id=f"turn-1:c{n}",
            now=iso_utc(with_jobs.clock()),
        )
        result = registry.run(context, tool, args)
    assert result.is_error and "2 background jobs are running already" in result.content
    assert store.counters[7] == 2


def test_a_job_is_offered_no_spawn_job_and_refused_one(with_jobs: TurnServices) -> None:
    meta = turn_meta()
    assert CHAT_TURN.tools(meta, with_jobs).get("spawn_job") is not None
    assert JOB_TURN.tools(meta, with_jobs).get("spawn_job") is None
    assert JOB_TURN.tools(meta, with_jobs).get("cannot_do") is not None, "a job may say it cannot do its task"
    assert CHAT_TURN.tools(meta, with_jobs).get("cannot_do") is None, "a chat's turn answers the user instead"
    registry = with_jobs.tools.registry
    tool, args = registry.parse("spawn_job", {"task": "t", "title": "T"})
    inside = ToolContext(
        Scope(Conversation(7), 7), turn_id="job-abc", call_id="job-abc:c", now=iso_utc(with_jobs.clock())
    )
    result = registry.run(inside, tool, args)
    assert result.is_error and "cannot start other jobs" in result.content


def test_a_job_sees_its_task_only_runs_its_tools_and_reports_through_the_inbox(
    with_jobs: TurnServices,
    model: ScriptedModel,
    store: InMemoryJobStore,
    job_starter: RecordingStarter,
    telegram: InMemoryTelegram,
    tasks: InMemoryTaskRepository,
) -> None:
    spawn_in_turn(with_jobs, model)
    sent_before = telegram.texts(7)
    model.responses += [tool_use(("add_task", {"title": "buy milk"})), text_response("Added *buy milk*.")]
    job = job_start(job_starter)
    drive_turn(with_jobs, job)

    job_request = model.requests[2]
    assert [m["role"] for m in job_request.messages] == ["user"]
    texts = [b["text"] for b in job_request.messages[0]["content"] if b.get("type") == "text"]
    assert texts[0] == "Add buy milk." and "## Background job\nYou are background job #1 “Milk”" in texts[-1]
    assert "spawn_job" not in {tool["name"] for tool in job_request.tools}
    assert telegram.texts(7) == sent_before, "a job sends nothing to the chat itself"
    assert [t.title for t in tasks.list(7, "all")] == ["buy milk"]
    ended = store.get(7, 1)
    assert ended is not None and ended.status == "done" and ended.tool_rounds == 1
    (report,) = [
        m
        for m in with_jobs.outbound.sequencer().inbox.pending(Conversation(7))
        if isinstance(m.kind, JobEnded)
    ]
    assert report.text.startswith("✅ Background job #1 “Milk” is done (1 tool round, ")
    assert report.text.endswith("Added *buy milk*.")

    # The chat's next turn (started by the report) shows it without a model call and keeps it.
    calls = len(model.requests)
    chat_turn = TurnStart(
        turn=TurnRef(turn_id="turn-report", chat_id=7, user_id=7, update_id=report.update_id)
    )
    drive_turn(with_jobs, chat_turn)
    assert len(model.requests) == calls
    assert telegram.texts(7)[-1].endswith("Added <i>buy milk</i>.")
    stored = [m.content for m in with_jobs.stores.messages.recent(Conversation(7), 10)]
    assert stored[-2] == "(Background job #1 “Milk” has ended: done. Its report follows.)"
    assert stored[-1] == report.text


def test_a_job_reports_once_whatever_finishes_or_recovers_it(
    with_jobs: TurnServices, model: ScriptedModel, store: InMemoryJobStore, job_starter: RecordingStarter
) -> None:
    spawn_in_turn(with_jobs, model)
    turn = job_start(job_starter).turn
    report_job(turn, Ending("stopped"), with_jobs)
    report_job(turn, Ending("failed"), with_jobs)  # a recovery after the ending: the first ending stays
    from stepwise.states.finish_turn import finish_turn

    finish_turn(FinishTurnInput(turn=turn, error="States.TaskFailed"), with_jobs)
    reports = [
        m
        for m in with_jobs.outbound.sequencer().inbox.pending(Conversation(7))
        if isinstance(m.kind, JobEnded)
    ]
    assert len(reports) == 1 and "was stopped" in reports[0].text
    ended = store.get(7, 1)
    assert ended is not None and ended.status == "stopped"


def test_a_job_stops_at_its_deadline_and_at_the_budget(
    with_jobs: TurnServices, model: ScriptedModel, job_starter: RecordingStarter
) -> None:
    spawn_in_turn(with_jobs, model)
    turn = job_start(job_starter).turn
    assert start_job(turn, with_jobs).route == "model"
    meta = with_jobs.stores.turns.get_meta(turn.turn_id)
    assert job_must_stop(meta, with_jobs) is None
    with_jobs.clock.now += timedelta(minutes=16)  # type: ignore[attr-defined]
    stop = job_must_stop(meta, with_jobs)
    assert stop is not None and stop.route == "reply"
    reply = with_jobs.stores.turns.get_reply(turn.turn_id)
    assert reply is not None and reply.source == "job_timeout" and "15 minutes" in reply.text


def a_job(number: int, execution: str, title: str) -> Job:
    return Job(
        user_id=7,
        number=number,
        chat_id=7,
        execution=execution,
        title=title,
        task="t",
        parent_turn_id="p",
        created_at="2026-11-22T09:00:00.000Z",
        deadline="2026-11-22T09:15:00.000Z",
    )


def test_start_job_without_a_record_and_an_ended_job_go_to_finish_turn(
    with_jobs: TurnServices, store: InMemoryJobStore
) -> None:
    missing = TurnRef(turn_id="job-x", chat_id=7, user_id=7, update_id=0, job=5)
    assert start_job(missing, with_jobs).route == "reply"
    store.create(a_job(6, "job-y", "T"))
    store.finish(7, 6, "stopped", "report", "2026-11-22T09:01:00.000Z")
    ended = TurnRef(turn_id="job-y", chat_id=7, user_id=7, update_id=0, job=6)
    assert start_job(ended, with_jobs).route == "reply"


def step(*calls: tuple[str, bool | None], approval_id: str | None = None) -> ModelStep:
    """A model step with these calls and their outcome: True worked, False failed, None unanswered."""
    uses = [
        {"type": "tool_use", "id": f"c{n}", "name": name, "input": {}} for n, (name, _) in enumerate(calls)
    ]
    results = [
        {"type": "tool_result", "tool_use_id": f"c{n}", "content": "x", "is_error": not ok}
        for n, (_, ok) in enumerate(calls)
        if ok is not None
    ]
    done = all(ok is not None for _, ok in calls)
    return ModelStep(
        step=0,
        content=uses,
        stop_reason="tool_use",
        model="m",
        message_id="m",
        created_at="t",
        tool_results=results if done else [],
        partial_results={r["tool_use_id"]: r for r in results},
        approval_id=approval_id,
        tokens=1500,
        cost_nano_usd=2_500_000,
    )


def test_what_was_done_counts_calls_that_worked_failed_or_waited() -> None:
    assert what_was_done([]) == "It had not used any tools."
    steps = [
        step(("add_task", True), ("add_task", True), ("list_tasks", True)),
        step(("delete_task", None), approval_id="a"),
    ]
    expected = "What it did: add_task ×2, list_tasks. Not done: delete_task (waiting for approval)."  # noqa: RUF001
    assert what_was_done(steps) == expected
    assert what_was_done([step(("add_task", False))]) == "What it did: nothing. Not done: add_task."


@pytest.mark.parametrize(
    ("status", "headline"),
    [
        ("done", "✅ Background job #3 “Trip” is done"),
        ("timed_out", "⏱ Background job #3 “Trip” ran out of time"),
        ("stopped", "⏹ Background job #3 “Trip” was stopped"),
        ("over_budget", "⏸ Background job #3 “Trip” stopped at today's usage limit"),
    ],
)
def test_the_report_says_how_the_job_ended_what_it_cost_and_its_result_or_what_it_did(
    status: str, headline: str
) -> None:
    job = a_job(3, "job-z", "Trip")
    ending = Ending(status, "The result." if status == "done" else None)  # type: ignore[arg-type]
    text = report_text(job, ending, [step(("add_task", True))])
    assert text.startswith(f"{headline} (1 tool round, 1,500 tokens, about $0.0025).")
    assert text.endswith("The result." if status == "done" else "What it did: add_task.")


@pytest.mark.parametrize("status", ["not_done", "failed"])
def test_a_job_that_could_not_do_its_task_says_so_and_why_in_its_first_line(status: str) -> None:
    job = a_job(3, "job-z", "Trip")
    why = "I cannot\nbook flights"
    untouched = report_text(job, Ending(status, why=why), [])  # type: ignore[arg-type]
    assert untouched == (
        "⚠️ Background job #3 “Trip” could not do its task (0 tool rounds, 0 tokens, about $0.0000): "
        "I cannot book flights."
    )
    worked = report_text(job, Ending(status, "Task #9 is gone.", "none worked."), [step(("get_task", False))])  # type: ignore[arg-type]
    first, *rest = worked.split("\n\n")
    assert first.endswith("could not do its task (1 tool round, 1,500 tokens, about $0.0025): none worked.")
    assert rest == ["Task #9 is gone.", "What it did: nothing. Not done: get_task."]
    assert report_text(job, Ending("failed"), []).endswith("): an error stopped it.")


def answered(text: str, stop_reason: str = "end_turn", *calls: tuple[str, bool | None]) -> list[ModelStep]:
    """A job's steps: a round of `calls` (if any), then its last answer `text`."""
    last = ModelStep(
        step=1 if calls else 0,
        content=[{"type": "text", "text": text}] if text else [],
        stop_reason=stop_reason,
        model="m",
        message_id="m2",
        created_at="t",
    )
    return [step(*calls), last] if calls else [last]


def reply(text: str, source: str = "model") -> Reply:
    return Reply(text=text, source=source, message_id="m2", created_at="t")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("outcome", "steps", "answer", "error", "ending"),
    [
        (
            "an answer that needed no tool",
            answered("A haiku."),
            reply("A haiku."),
            None,
            Ending("done", "A haiku."),
        ),
        (
            "a tool that worked",
            answered("Added.", "end_turn", ("add_task", True)),
            reply("Added."),
            None,
            Ending("done", "Added."),
        ),
        (
            "one call of two worked",
            answered("Half.", "end_turn", ("add_task", True), ("delete_task", False)),
            reply("Half."),
            None,
            Ending("done", "Half."),
        ),
        (
            "every call failed or was denied",
            answered("No such task.", "end_turn", ("delete_task", False)),
            reply("No such task."),
            None,
            Ending("not_done", "No such task.", "none of its tool calls worked."),
        ),
        (
            "a refusal",
            answered("", "refusal"),
            reply("I can't help with that one."),
            None,
            Ending("not_done", why="its model declined the task."),
        ),
        (
            "no answer",
            answered(""),
            reply("I don't have an answer"),
            None,
            Ending("not_done", why="its model gave no answer."),
        ),
        (
            "cannot_do",
            [step(("cannot_do", True))],
            reply("No tool books flights.", "job_not_done"),
            None,
            Ending("not_done", why="No tool books flights."),
        ),
        ("the deadline", [], reply("Out of time.", "job_timeout"), None, Ending("timed_out", "Out of time.")),
        (
            "the model failed",
            [],
            None,
            "ModelTransientError",
            Ending("failed", why="the language model did not answer, even after retries."),
        ),
        (
            "a state failed",
            [],
            None,
            "States.TaskFailed",
            Ending("failed", why="an error stopped it (States.TaskFailed)."),
        ),
    ],
)
def test_whether_a_job_did_its_task_is_decided_from_what_its_turn_recorded(
    outcome: str, steps: list[ModelStep], answer: Reply | None, error: str | None, ending: Ending
) -> None:
    assert job_outcome(answer, error, steps) == ending, outcome


def test_a_job_whose_model_cannot_do_its_task_ends_without_another_call_and_reports_one_line(
    with_jobs: TurnServices, model: ScriptedModel, store: InMemoryJobStore, job_starter: RecordingStarter
) -> None:
    spawn_in_turn(with_jobs, model, task="Book me a flight to Porto.")
    model.responses.append(tool_use(("cannot_do", {"reason": "No tool of mine can book flights."})))
    calls = len(model.requests)
    drive_turn(with_jobs, job_start(job_starter))
    assert len(model.requests) == calls + 1, "no model call after cannot_do"
    ended = store.get(7, 1)
    assert ended is not None and ended.status == "not_done" and ended.tool_rounds == 0
    assert ended.report == (
        "⚠️ Background job #1 “Milk” could not do its task (0 tool rounds, 0 tokens, about $0.0000): "
        "No tool of mine can book flights."
    )


@pytest.mark.parametrize(
    ("said", "task"),
    [
        ("in the background: group my tasks into projects", "group my tasks into projects"),
        ("In the background, review my week", "review my week"),
        ("background job - add buy milk", "add buy milk"),
    ],
)
def test_offline_in_the_background_starts_a_job_with_the_rest_as_its_task(said: str, task: str) -> None:
    ((name, args),) = job_intent(said) or []
    assert name == "spawn_job" and args["task"] == task and args["title"]


@pytest.mark.parametrize(
    "said", ["add background music", "in the background", "what runs in the background?"]
)
def test_offline_other_messages_start_no_job(said: str) -> None:
    assert job_intent(said) is None


OFFLINE = "I'm in offline mode (no model API is configured), "


@pytest.mark.parametrize(
    ("task", "in_job", "answer"),
    [
        (
            "frobnicate the widgets",
            True,
            (
                "cannot_do",
                {"reason": OFFLINE + "so I didn't understand the task."},
            ),
        ),
        ("frobnicate the widgets", False, None),  # in a chat it says so in words, as before
        ("add buy milk", True, ("add_task", {"title": "buy milk"})),
        ("what time is it", True, None),  # an answer that needs no tool
    ],
)
def test_offline_a_job_whose_task_the_rules_do_not_understand_says_it_cannot_do_it(
    with_jobs: TurnServices, task: str, in_job: bool, answer: tuple[str, dict[str, str]] | None
) -> None:
    request = ModelRequest(
        model="m",
        max_tokens=100,
        system=[],
        messages=[{"role": "user", "content": [{"type": "text", "text": task}]}],
        tools=(JOB_TURN if in_job else CHAT_TURN).tools(turn_meta(), with_jobs).api_tools(),
    )
    response = OfflineModel().complete(request)
    if answer is None:
        assert response.stop_reason == "end_turn" and not response.tool_uses
    else:
        assert [(call["name"], call["input"]) for call in response.tool_uses] == [answer]


def command(services: TurnServices, args: str) -> str:
    return jobs_command(CommandRequest(args, turn_meta(), services, reply_key=""))


def test_jobs_lists_and_refuses_bad_stop_arguments(with_jobs: TurnServices, model: ScriptedModel) -> None:
    assert command(with_jobs, "").startswith("You have no background jobs.")
    spawn_in_turn(with_jobs, model)
    listing = command(with_jobs, "")
    assert (
        "(1 of at most 2 running)" in listing
        and "- #1 Milk: running, 0 tool rounds, 0 tokens, $0.0000" in listing
    )
    for bad in ("stop", "stop x", "stop 0", "halt 1", "stop 1 2"):
        assert command(with_jobs, bad).startswith("Use /jobs to list"), bad
    assert command(with_jobs, "stop 4") == "You have no background job #4. /jobs lists yours."
    assert (
        command(with_jobs, "stop 1") == "Job #1 “Milk” is finishing already; its report follows."
    )  # no stopper here


def test_jobs_says_so_where_jobs_are_not_deployed(services: TurnServices) -> None:
    assert command(services, "") == "Background jobs are not enabled in this deployment."


def test_a_job_whose_record_is_gone_ends_through_finish_turn_not_a_failed_execution(
    with_jobs: TurnServices,
) -> None:
    # Given a job's execution whose record is gone
    visited: list[str] = []
    start = TurnStart(turn=TurnRef(turn_id="job-x", chat_id=7, user_id=7, update_id=0, job=5))
    # When it runs through the turn's loop (the state machine's routes)
    outcome = run_turn(start, with_jobs, Hooks(task_token=lambda: "token", visit=visited.append))
    # Then it ends in FinishTurn, not FailTurn: FailTurn's payload reads the caught error (`$.error.Error`),
    # and with none caught Step Functions would fail the execution (States.Runtime)
    assert isinstance(outcome, Ended) and outcome.status == "SUCCEEDED"
    assert visited == ["LoadContext", "FinishTurn"]
