"""Background jobs on the in-memory stack (support.memory_stack): spawn_job starts a job as its own execution,
the parent turn answers at once, the job's report enters the chat's inbox and is answered in turn and kept in
the history; MAX_JOBS, a job's approval (a delete, a check-in), a job that could not do its task, a report
arriving behind a command, /jobs and /jobs stop, the deadline, the budget, order with the user's own
messages, and a check-in starting a job. The emulated stack keeps the wiring (a job through the real state
machine and the jobs table), the crashes and the throttling (tests/integration/test_jobs.py)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from support.memory_stack import MemoryStack

from stepwise_local import updates
from stepwise_local.anthropic_server import Scripted, error, last_user_text, text, tool_use

JOB_MARK = "## Background job"


def in_job(request: dict[str, Any]) -> bool:
    return JOB_MARK in json.dumps(request["messages"])


def job_number(request: dict[str, Any]) -> int:
    found = json.dumps(request["messages"]).split("You are background job #", 1)[1]
    return int(found.split(" ", 1)[0])


def has_results(request: dict[str, Any]) -> bool:
    content = request["messages"][-1]["content"]
    return isinstance(content, list) and any(block.get("type") == "tool_result" for block in content)


def scripted(
    parent: list[Scripted], job: Callable[[dict[str, Any]], Scripted]
) -> Callable[[dict[str, Any]], Scripted]:
    """Answers by who asks: the parent's answers in order (then an echo), the job's from `job(request)`."""
    queue = list(parent)

    def answer(request: dict[str, Any]) -> Scripted:
        if in_job(request):
            return job(request)
        return queue.pop(0) if queue else text(f"You said: {last_user_text(request)}")

    return answer


def job_steps(*answers: Scripted) -> Callable[[dict[str, Any]], Scripted]:
    """A job's answers: the n-th model call of a job gets the n-th answer (counted by its tool rounds)."""

    def answer(request: dict[str, Any]) -> Scripted:
        rounds = sum(1 for m in request["messages"] if m["role"] == "assistant")
        return answers[min(rounds, len(answers) - 1)]

    return answer


def add_task(stack: MemoryStack, user: int, title: str) -> int:
    """A task added by a turn of its own (the model calls add_task); its id."""
    stack.anthropic.default = scripted(
        [tool_use(("add_task", {"title": title})), text("Added.")], lambda _request: text("unused")
    )
    stack.say(user, f"add {title}")
    (task,) = stack.tasks(user)
    return int(task["task_id"])


def spawn(task: str, title: str) -> tuple[str, dict[str, Any]]:
    return ("spawn_job", {"task": task, "title": title})


def replies_with(stack: MemoryStack, user: int, contains: str) -> list[str]:
    """The user's replies, one of which contains `contains` (everything queued has run)."""
    replies = stack.replies(user)
    assert any(contains in reply for reply in replies), f"no reply with {contains!r}: {replies}"
    return replies


def settled(stack: MemoryStack) -> bool:
    return all(e["status"] != "RUNNING" for e in stack.job_executions())


def test_a_job_starts_at_once_reports_in_the_chat_and_its_report_is_in_the_history(
    stack: MemoryStack,
) -> None:
    user = stack.new_user()
    stack.anthropic.default = scripted(
        [tool_use(spawn("Add the task 'buy milk'.", "Milk")), text("I started job #1 for that.")],
        job_steps(tool_use(("add_task", {"title": "buy milk"})), text("Added **buy milk** as task #1.")),
    )
    stack.say(user, "in the background please add buy milk")
    replies = replies_with(stack, user, "is done")
    assert replies[0] == "I started job #1 for that."
    assert replies[-1].startswith("✅ Background job #1 “Milk” is done (1 tool round, ")
    assert replies[-1].endswith("Added buy milk as task #1.")
    assert [task["title"] for task in stack.tasks(user)] == ["buy milk"]
    (job,) = stack.jobs_of(user)
    assert job["status"] == "done" and int(job["tool_rounds"]) == 1 and int(job["tokens"]) > 0
    (execution,) = stack.job_executions()
    assert execution["status"] == "SUCCEEDED"
    job_requests = [r for r in stack.anthropic.requests if in_job(r)]
    assert job_requests and all("spawn_job" not in {t["name"] for t in r["tools"]} for r in job_requests)
    assert last_user_text(job_requests[0]) == "Add the task 'buy milk'.", "the job sees its task, no chat"
    stored = [(m["role"], m["content"]) for m in stack.stored(user)]
    assert stored[-2][0] == "user" and "Background job #1 “Milk” has ended: done" in stored[-2][1]
    assert stored[-1][0] == "assistant" and "Added **buy milk** as task #1." in stored[-1][1]

    # Given the report in the history, when the user refers to it, then the model sees it.
    stack.say(user, "thanks")
    last_request = stack.anthropic.requests[-1]
    assert "Added **buy milk** as task #1." in json.dumps(last_request["messages"])


def test_several_jobs_up_to_max_jobs_each_report() -> None:
    stack = MemoryStack(env={"MAX_JOBS": "2"})
    user = stack.new_user()
    stack.anthropic.default = scripted(
        [
            tool_use(spawn("Say one.", "One"), spawn("Say two.", "Two"), spawn("Say three.", "Three")),
            text("Two jobs started; the third did not."),
        ],
        lambda request: text(f"Result of job {job_number(request)}."),
    )
    stack.say(user, "three things in the background")
    replies_with(stack, user, "Result of job 1.")
    replies = replies_with(stack, user, "Result of job 2.")
    assert settled(stack)
    parent_round = stack.anthropic.requests[1]
    results = [b for b in parent_round["messages"][-1]["content"] if b.get("type") == "tool_result"]
    assert [bool(r["is_error"]) for r in results] == [False, False, True]
    assert "2 background jobs are running already" in results[2]["content"]
    assert sorted(int(job["number"]) for job in stack.jobs_of(user)) == [1, 2]
    assert sum("is done" in reply for reply in replies) == 2


def test_a_jobs_destructive_call_waits_for_a_tap_that_names_the_job(stack: MemoryStack) -> None:
    user = stack.new_user()
    task_id = add_task(stack, user, "old plan")
    stack.anthropic.default = scripted(
        [tool_use(spawn("Delete the task 'old plan'.", "Cleanup")), text("Started the cleanup job.")],
        job_steps(tool_use(("delete_task", {"task_id": task_id})), text("Deleted the old plan.")),
    )
    stack.say(user, "clean up in the background")
    message = stack.buttons(user)
    assert stack.telegram.text_of(message).splitlines()[:2] == [
        "🔐 Approval needed",
        f"Background job #1 “Cleanup” asks to delete task #{task_id} “old plan”.",
    ], "the request names the job before the tap"
    assert len(stack.tasks(user)) == 1, "nothing is deleted before the tap"
    stack.press(user, message, "Approve")
    replies = replies_with(stack, user, "is done")
    assert replies[-1].endswith("Deleted the old plan.")
    assert stack.tasks(user) == []


def test_a_check_in_set_by_a_job_waits_for_a_tap_that_names_the_job(stack: MemoryStack) -> None:
    user = stack.new_user()
    checkin = {"text": "tell me a joke", "checkin": True, "repeat": {"days": ["mon"], "time": "08:00"}}
    stack.anthropic.default = scripted(
        [tool_use(spawn("Set up a weekly joke.", "Jokes")), text("Started.")],
        job_steps(tool_use(("set_reminder", checkin)), text("Set it.")),
    )
    stack.say(user, "set up a weekly joke in the background")
    message = stack.buttons(user)
    assert stack.telegram.text_of(message).splitlines()[:2] == [
        "🔐 Approval needed",
        "Background job #1 “Jokes” asks to set a check-in every Monday at 08:00 (UTC): “tell me a joke”.",
    ]
    assert stack.reminders_of(user) == [], "nothing is set before the tap"
    stack.press(user, message, "Approve")
    replies_with(stack, user, "is done")
    assert settled(stack)
    (record,) = stack.reminders_of(user)
    assert record["checkin"] and record["created_by"] == {"kind": "job", "number": 1, "name": "Jokes"}
    stack.say(user, "/reminders")
    assert stack.replies(user)[-1].endswith("tell me a joke [set by background job #1 “Jokes”]")


FIGURES = r"\(0 tool rounds, [\d,]+ tokens, about \$[\d.]+\)"


@pytest.mark.parametrize(
    ("answer", "why", "state"),
    [
        (
            tool_use(("cannot_do", {"reason": "No tool of mine can book flights."})),
            "No tool of mine can book flights.",
            "could not do it",
        ),
        (Scripted(content=[]), "its model gave no answer.", "could not do it"),
        (error(400, "invalid_request_error"), "the language model's API rejected the request.", "failed"),
    ],
    ids=["cannot_do", "no answer", "error"],
)
def test_a_job_that_could_not_do_its_task_says_so_and_why_in_one_line(
    stack: MemoryStack, answer: Scripted, why: str, state: str
) -> None:
    user = stack.new_user()
    parent = [tool_use(spawn("Book a flight to Porto.", "Flight")), text("Started.")]
    stack.anthropic.default = scripted(parent, lambda _request: answer)
    stack.say(user, "book me a flight in the background")
    replies = replies_with(stack, user, "could not do its task")
    headline = "⚠️ Background job #1 “Flight” could not do its task "
    assert re.fullmatch(re.escape(headline) + FIGURES + ": " + re.escape(why), replies[-1]), replies[-1]
    assert not any("is done" in reply for reply in replies)
    assert settled(stack)
    stack.say(user, "/jobs")
    assert f"#1 Flight: {state}, 0 tool rounds" in stack.replies(user)[-1]


def test_a_report_that_arrives_during_a_command_reads_as_the_jobs_report(stack: MemoryStack) -> None:
    user = stack.new_user()

    def job(_request: dict[str, Any]) -> Scripted:
        # the user sends /usage while the job works: its turn takes it and holds the chat, so the job's
        # report enters the inbox behind it
        answer = stack.post_update(updates.text_message(user, "/usage"))
        assert answer["statusCode"] == 200
        return tool_use(("cannot_do", {"reason": "The task is unclear to me."}))

    stack.anthropic.default = scripted(
        [tool_use(spawn("Frobnicate the widgets.", "Widgets")), text("Started.")], job
    )
    stack.say(user, "in the background: frobnicate the widgets")
    replies_with(stack, user, "could not do its task")
    assert settled(stack)
    replies = stack.replies(user)
    usage = next(i for i, reply in enumerate(replies) if reply.startswith("Your usage"))
    assert "Widgets" not in replies[usage] and "could not" not in replies[usage]
    report = replies[usage + 1]  # right after the command's answer, a message of its own
    assert report.splitlines()[0].startswith("⚠️ Background job #1 “Widgets” could not do its task ("), report
    assert report.endswith("): The task is unclear to me.") and "\n" not in report, "one line"


def test_jobs_lists_and_stop_ends_a_job_waiting_for_its_approval(stack: MemoryStack) -> None:
    user = stack.new_user()
    task_id = add_task(stack, user, "keep me")
    stack.anthropic.default = scripted(
        [tool_use(spawn("Delete the task 'keep me'.", "Risky")), text("Started.")],
        job_steps(tool_use(("delete_task", {"task_id": task_id})), text("Deleted.")),
    )
    stack.say(user, "delete it in the background")
    stack.buttons(user)
    stack.say(user, "/jobs")
    listing = stack.replies(user)[-1]
    assert "#1 Risky: running, 1 tool round" in listing and "1 of at most 3 running" in listing
    stack.say(user, "/jobs stop 1")
    stopping = next(r for r in stack.replies(user) if r.startswith("Stopping job"))
    assert stopping.startswith("Stopping job #1 “Risky”.")
    replies = replies_with(stack, user, "was stopped")
    assert "⏹ Background job #1 “Risky” was stopped (1 tool round" in replies[-1]
    assert "Not done: delete_task (waiting for approval)." in replies[-1]
    assert not any(m.get("reply_markup") for m in stack.telegram.messages(user)), "its buttons are gone"
    closed = [
        stack.telegram.text_of(m) for m in stack.telegram.messages(user) if "Approval needed" in m["text"]
    ]
    assert closed[-1].endswith("⏹ The job ended before an answer — nothing was changed.")
    assert [t["title"] for t in stack.tasks(user)] == ["keep me"]
    (job,) = stack.jobs_of(user)
    assert job["status"] == "stopped"
    stack.say(user, "/jobs stop 1")
    assert stack.replies(user)[-1] == "Job #1 “Risky” has ended already (stopped)."
    stack.say(user, "/jobs stop 7")
    assert stack.replies(user)[-1] == "You have no background job #7. /jobs lists yours."


def test_a_job_past_its_deadline_stops_and_says_what_it_did() -> None:
    stack = MemoryStack(env={"JOB_TIMEOUT_MINUTES": "5"})
    user = stack.new_user()

    def slow_job(request: dict[str, Any]) -> Scripted:
        if not has_results(request):
            stack.advance_clock(timedelta(minutes=6).total_seconds())  # the job's first round takes 6 minutes
            return tool_use(("list_tasks", {}))
        return text("never asked")

    parent = [tool_use(spawn("List my tasks.", "Slow")), text("Started.")]
    stack.anthropic.default = scripted(parent, slow_job)
    stack.say(user, "list my tasks in the background")
    replies = replies_with(stack, user, "ran out of time")
    assert "⏱ Background job #1 “Slow” ran out of time (1 tool round" in replies[-1]
    assert "a job may work for 5 minutes" in replies[-1] and "What it did: list_tasks." in replies[-1]
    assert not any(r["messages"][-1] and has_results(r) for r in stack.anthropic.requests if in_job(r))
    (job,) = stack.jobs_of(user)
    assert job["status"] == "timed_out"
    assert settled(stack)


def test_a_job_stops_at_the_daily_budget() -> None:
    stack = MemoryStack(env={"DAILY_TOKEN_BUDGET": "30000"})  # the parent turn's calls: about 7,000
    user = stack.new_user()
    heavy = tool_use(("list_tasks", {}))
    heavy.usage.update({"input_tokens": 60_000})
    stack.anthropic.default = scripted(
        [tool_use(spawn("List my tasks.", "Costly")), text("Started.")], job_steps(heavy, text("never"))
    )
    stack.say(user, "in the background list my tasks")
    replies = replies_with(stack, user, "usage limit")
    assert "⏸ Background job #1 “Costly” stopped at today's usage limit" in replies[-1]
    assert "reached today's usage limit" in replies[-1]
    assert sum(1 for r in stack.anthropic.requests if in_job(r)) == 1
    (job,) = stack.jobs_of(user)
    assert job["status"] == "over_budget"


def test_a_report_waits_for_the_turn_that_holds_the_chat_and_comes_after_earlier_messages(
    stack: MemoryStack,
) -> None:
    user = stack.new_user()
    task_id = add_task(stack, user, "x")
    stack.anthropic.default = scripted(
        [tool_use(spawn("Delete task x.", "Wait")), text("Started."), text("Hi there.")],
        job_steps(tool_use(("delete_task", {"task_id": task_id})), text("Deleted x.")),
    )
    stack.say(user, "delete x in the background")
    message = stack.buttons(user)
    stack.say(user, "hello")  # answered while the job waits for its tap
    stack.press(user, message, "Approve")
    replies = replies_with(stack, user, "is done")
    assert replies.index("Hi there.") < len(replies) - 1
    stored = [m["content"] for m in stack.stored(user)]
    assert stored.index("hello") < next(i for i, c in enumerate(stored) if "has ended: done" in c)


def test_a_recurring_check_in_starts_a_job(stack: MemoryStack) -> None:
    user = stack.new_user()
    checkin = {
        "text": "review my week in the background",
        "checkin": True,
        "repeat": {"days": [], "time": "09:00"},
    }
    stack.anthropic.default = scripted(
        [tool_use(("set_reminder", checkin)), text("Check-in set.")], lambda _request: text("unused")
    )
    stack.send(user, "every day at 9, review my week in the background")
    stack.press(user, stack.buttons(user), "Approve")  # setting a check-in waits for the tap

    def answers(request: dict[str, Any]) -> Scripted:
        if in_job(request):
            return text("Your week: nothing overdue.")
        if has_results(request):
            return text("I started your weekly review.")
        assert "Scheduled check-in #1" in last_user_text(request)
        return tool_use(spawn("Review the user's week: overdue tasks, reminders.", "Weekly review"))

    stack.anthropic.default = answers
    tomorrow = (stack.now() + timedelta(days=1)).replace(hour=9, minute=0, second=30)
    stack.advance_clock((tomorrow - stack.now()).total_seconds())
    assert [f for f in stack.fire_due_schedules() if f.name.startswith(f"u{user}-")]
    replies = replies_with(stack, user, "Your week: nothing overdue.")
    assert "I started your weekly review." in replies
    assert replies[-1].startswith("✅ Background job #1 “Weekly review” is done")
    assert settled(stack)
