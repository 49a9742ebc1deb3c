"""Background jobs through the real state machine: spawn_job starts a job as its own execution, the parent
turn answers at once, the job's report enters the chat's inbox and is answered in turn and kept in the
history; parallel jobs and MAX_JOBS, a job's approval, /jobs and /jobs stop, the deadline, the budget, a
crash of the state that starts a job, and order with the user's own messages."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from boto3.dynamodb.conditions import Key
from support.stack import Stack

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
    """Answers by who asks, since the parent turn and its jobs run at the same time: the parent's answers in
    order (then an echo), and the job's from `job(request)`."""
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


def add_task(stack: Stack, user: int, title: str) -> int:
    """A task added by a turn of its own (the model calls add_task); its id."""
    stack.anthropic.default = scripted(
        [tool_use(("add_task", {"title": title})), text("Added.")], lambda _request: text("unused")
    )
    stack.say(user, f"add {title}")
    (task,) = stack.tasks(user)
    return int(task["task_id"])


def spawn(task: str, title: str) -> tuple[str, dict[str, Any]]:
    return ("spawn_job", {"task": task, "title": title})


def wait_for_reply(stack: Stack, user: int, contains: str, timeout: float = 30.0) -> list[str]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        replies = stack.replies(user)
        if any(contains in reply for reply in replies):
            return replies
        time.sleep(0.02)
    raise AssertionError(f"no reply with {contains!r} in chat {user}: {stack.replies(user)}")


def jobs_of(stack: Stack, user: int) -> list[dict[str, Any]]:
    table = stack.emulation.table("JobsTable")
    items = table.query(KeyConditionExpression=Key("user_id").eq(user), ConsistentRead=True)["Items"]
    return [item for item in items if str(item["sk"]).startswith("job#")]


def job_executions(stack: Stack, user: int) -> list[dict[str, Any]]:
    """The executions of the user's jobs (the stack is shared by the tests)."""
    found = []
    for execution in stack.emulation.executions():
        if execution["name"].startswith("job-"):
            described = stack.emulation.describe(execution["name"])
            if json.loads(described["input"])["turn"]["chat_id"] == user:
                found.append(described)
    return found


def wait_until_settled(stack: Stack, user: int, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while any(e["status"] == "RUNNING" for e in job_executions(stack, user)):
        if time.monotonic() > deadline:
            raise AssertionError("a job is still running")
        time.sleep(0.02)


def test_a_job_starts_at_once_reports_in_the_chat_and_its_report_is_in_the_history(stack: Stack) -> None:
    user = stack.new_user()
    stack.anthropic.default = scripted(
        [tool_use(spawn("Add the task 'buy milk'.", "Milk")), text("I started job #1 for that.")],
        job_steps(tool_use(("add_task", {"title": "buy milk"})), text("Added **buy milk** as task #1.")),
    )
    stack.say(user, "in the background please add buy milk")
    replies = wait_for_reply(stack, user, "is done")
    stack.emulation.wait_idle(user)  # the report's turn stores it after sending it
    assert replies[0] == "I started job #1 for that."
    assert replies[-1].startswith("✅ Background job #1 “Milk” is done (1 tool round, ")
    assert replies[-1].endswith("Added buy milk as task #1.")
    assert [task["title"] for task in stack.tasks(user)] == ["buy milk"]
    (job,) = jobs_of(stack, user)
    assert job["status"] == "done" and int(job["tool_rounds"]) == 1 and int(job["tokens"]) > 0
    (execution,) = job_executions(stack, user)
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


def test_several_jobs_run_at_once_up_to_max_jobs_and_each_reports(stack: Stack) -> None:
    stack.emulation.config.env["MAX_JOBS"] = "2"
    user = stack.new_user()
    stack.anthropic.default = scripted(
        [
            tool_use(spawn("Say one.", "One"), spawn("Say two.", "Two"), spawn("Say three.", "Three")),
            text("Two jobs started; the third did not."),
        ],
        lambda request: text(f"Result of job {job_number(request)}."),
    )
    stack.say(user, "three things in the background")
    wait_for_reply(stack, user, "Result of job 1.")
    replies = wait_for_reply(stack, user, "Result of job 2.")
    wait_until_settled(stack, user)
    parent_round = stack.anthropic.requests[1]
    results = [b for b in parent_round["messages"][-1]["content"] if b.get("type") == "tool_result"]
    assert [bool(r["is_error"]) for r in results] == [False, False, True]
    assert "2 background jobs are running already" in results[2]["content"]
    assert sorted(int(job["number"]) for job in jobs_of(stack, user)) == [1, 2]
    assert sum("is done" in reply for reply in replies) == 2


def test_a_jobs_destructive_call_waits_for_a_tap_that_names_the_job(stack: Stack) -> None:
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
    replies = wait_for_reply(stack, user, "is done")
    assert replies[-1].endswith("Deleted the old plan.")
    assert stack.tasks(user) == []


def test_a_check_in_set_by_a_job_waits_for_a_tap_that_names_the_job(stack: Stack) -> None:
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
    reminders = stack.emulation.table("RemindersTable")

    def records() -> list[dict[str, Any]]:
        items = reminders.query(KeyConditionExpression=Key("user_id").eq(user), ConsistentRead=True)["Items"]
        return [item for item in items if str(item["sk"]).startswith("r#")]

    assert records() == [], "nothing is set before the tap"
    stack.press(user, message, "Approve")
    wait_for_reply(stack, user, "is done")
    wait_until_settled(stack, user)
    stack.emulation.wait_idle(user)
    (record,) = records()
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
    stack: Stack, answer: Scripted, why: str, state: str
) -> None:
    user = stack.new_user()
    parent = [tool_use(spawn("Book a flight to Porto.", "Flight")), text("Started.")]
    stack.anthropic.default = scripted(parent, lambda _request: answer)
    stack.say(user, "book me a flight in the background")
    replies = wait_for_reply(stack, user, "could not do its task")
    headline = "⚠️ Background job #1 “Flight” could not do its task "
    assert re.fullmatch(re.escape(headline) + FIGURES + ": " + re.escape(why), replies[-1]), replies[-1]
    assert not any("is done" in reply for reply in replies)
    wait_until_settled(stack, user)
    stack.emulation.wait_idle(user)
    stack.say(user, "/jobs")
    assert f"#1 Flight: {state}, 0 tool rounds" in stack.replies(user)[-1]


def a_jobs(event: Any) -> bool:
    """Whether a state's event is a job's (its turn's id is the job's execution name, `job-…`)."""
    turn = event.get("turn") if isinstance(event, dict) else None
    return isinstance(turn, dict) and str(turn.get("turn_id", "")).startswith("job-")


def test_a_report_that_arrives_during_a_command_reads_as_the_jobs_report(stack: Stack) -> None:
    user = stack.new_user()
    stack.anthropic.default = scripted(
        [tool_use(spawn("Frobnicate the widgets.", "Widgets")), text("Started.")],
        lambda _request: tool_use(("cannot_do", {"reason": "The task is unclear to me."})),
    )
    # The job's model call waits until the user has sent /usage (held before CallModel runs, so the turn
    # taking /usage is not queued behind it: the emulation runs one invocation at a time)
    with stack.emulation.holding("CallModelFunction", a_jobs) as job_calls_the_model:
        stack.say(user, "in the background: frobnicate the widgets")
        job_calls_the_model.wait_until_held()
        stack.send(user, "/usage")  # taken by its turn: the report enters the inbox behind it
    wait_for_reply(stack, user, "could not do its task")
    wait_until_settled(stack, user)
    stack.emulation.wait_idle(user)
    replies = stack.replies(user)
    usage = next(i for i, reply in enumerate(replies) if reply.startswith("Your usage"))
    assert "Widgets" not in replies[usage] and "could not" not in replies[usage]
    report = replies[usage + 1]  # right after the command's answer, a message of its own
    assert report.splitlines()[0].startswith("⚠️ Background job #1 “Widgets” could not do its task ("), report
    assert report.endswith("): The task is unclear to me.") and "\n" not in report, "one line"


def test_jobs_lists_and_stop_ends_a_job_waiting_for_its_approval(stack: Stack) -> None:
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
    assert stack.replies(user)[-1].startswith("Stopping job #1 “Risky”.")
    replies = wait_for_reply(stack, user, "was stopped")
    assert "⏹ Background job #1 “Risky” was stopped (1 tool round" in replies[-1]
    assert "Not done: delete_task (waiting for approval)." in replies[-1]
    assert not any(m.get("reply_markup") for m in stack.telegram.messages(user)), "its buttons are gone"
    closed = [
        stack.telegram.text_of(m) for m in stack.telegram.messages(user) if "Approval needed" in m["text"]
    ]
    assert closed[-1].endswith("⏹ The job ended before an answer — nothing was changed.")
    assert [t["title"] for t in stack.tasks(user)] == ["keep me"]
    (job,) = jobs_of(stack, user)
    assert job["status"] == "stopped"
    stack.say(user, "/jobs stop 1")
    assert stack.replies(user)[-1] == "Job #1 “Risky” has ended already (stopped)."
    stack.say(user, "/jobs stop 7")
    assert stack.replies(user)[-1] == "You have no background job #7. /jobs lists yours."


def test_a_job_past_its_deadline_stops_and_says_what_it_did(clock_stack: Stack) -> None:
    stack = clock_stack
    stack.emulation.config.env["JOB_TIMEOUT_MINUTES"] = "5"
    user = stack.new_user()

    def slow_job(request: dict[str, Any]) -> Scripted:
        if not has_results(request):
            stack.emulation.advance_clock(timedelta(minutes=6))  # the job's first round takes 6 minutes
            return tool_use(("list_tasks", {}))
        return text("never asked")

    parent = [tool_use(spawn("List my tasks.", "Slow")), text("Started.")]
    stack.anthropic.default = scripted(parent, slow_job)
    stack.say(user, "list my tasks in the background")
    replies = wait_for_reply(stack, user, "ran out of time")
    assert "⏱ Background job #1 “Slow” ran out of time (1 tool round" in replies[-1]
    assert "a job may work for 5 minutes" in replies[-1] and "What it did: list_tasks." in replies[-1]
    assert not any(r["messages"][-1] and has_results(r) for r in stack.anthropic.requests if in_job(r))
    (job,) = jobs_of(stack, user)
    assert job["status"] == "timed_out"
    wait_until_settled(stack, user)
    stack.emulation.wait_idle(user)


def test_a_job_stops_at_the_daily_budget(stack: Stack) -> None:
    stack.emulation.config.env["DAILY_TOKEN_BUDGET"] = "30000"  # the parent turn's calls: about 7,000
    user = stack.new_user()
    heavy = tool_use(("list_tasks", {}))
    heavy.usage.update({"input_tokens": 60_000})
    stack.anthropic.default = scripted(
        [tool_use(spawn("List my tasks.", "Costly")), text("Started.")], job_steps(heavy, text("never"))
    )
    stack.say(user, "in the background list my tasks")
    replies = wait_for_reply(stack, user, "usage limit")
    assert "⏸ Background job #1 “Costly” stopped at today's usage limit" in replies[-1]
    assert "reached today's usage limit" in replies[-1]
    assert sum(1 for r in stack.anthropic.requests if in_job(r)) == 1
    (job,) = jobs_of(stack, user)
    assert job["status"] == "over_budget"


def test_a_crash_of_the_state_that_starts_a_job_starts_it_once(stack: Stack) -> None:
    user = stack.new_user()
    stack.anthropic.default = scripted(
        [tool_use(spawn("Say hello.", "Hello")), text("Started.")], lambda _request: text("Hello!")
    )
    stack.emulation.crash("RunToolsFunction", "after")  # the job started, then RunTools died: it is retried
    stack.say(user, "in the background say hello")
    wait_for_reply(stack, user, "is done")
    wait_until_settled(stack, user)
    time.sleep(0.2)
    assert len(job_executions(stack, user)) == 1
    assert len(jobs_of(stack, user)) == 1
    assert sum("is done" in reply for reply in stack.replies(user)) == 1


def test_a_report_waits_for_the_turn_that_holds_the_chat_and_comes_after_earlier_messages(
    stack: Stack,
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
    replies = wait_for_reply(stack, user, "is done")
    assert replies.index("Hi there.") < len(replies) - 1
    stored = [m["content"] for m in stack.stored(user)]
    assert stored.index("hello") < next(i for i, c in enumerate(stored) if "has ended: done" in c)


def test_a_crash_of_finish_turn_after_its_effect_gives_one_reply_and_one_report(stack: Stack) -> None:
    user = stack.new_user()
    stack.anthropic.default = scripted(
        [tool_use(spawn("Say hi.", "Hi")), text("Started.")], lambda _request: text("Hi!")
    )
    stack.emulation.crash("FinishTurnFunction", "after", times=3)  # the turn's, the job's, the report's
    stack.say(user, "in the background say hi")
    wait_for_reply(stack, user, "is done")
    wait_until_settled(stack, user)
    stack.emulation.wait_idle(user)
    replies = stack.replies(user)
    assert replies.count("Started.") == 1
    assert sum("is done" in reply for reply in replies) == 1
    assert sum("has ended: done" in m["content"] for m in stack.stored(user)) == 1


def test_a_recurring_check_in_starts_a_job(clock_stack: Stack) -> None:
    stack, user = clock_stack, clock_stack.new_user()
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
    stack.emulation.wait_idle(user)

    def answers(request: dict[str, Any]) -> Scripted:
        if in_job(request):
            return text("Your week: nothing overdue.")
        if has_results(request):
            return text("I started your weekly review.")
        assert "Scheduled check-in #1" in last_user_text(request)
        return tool_use(spawn("Review the user's week: overdue tasks, reminders.", "Weekly review"))

    stack.anthropic.default = answers
    tomorrow = (stack.emulation.now() + timedelta(days=1)).replace(hour=9, minute=0, second=30)
    stack.emulation.advance_clock(tomorrow - stack.emulation.now())
    assert [f for f in stack.emulation.fire_due_schedules() if f.name.startswith(f"u{user}-")]
    replies = wait_for_reply(stack, user, "Your week: nothing overdue.")
    assert "I started your weekly review." in replies
    assert replies[-1].startswith("✅ Background job #1 “Weekly review” is done")
    wait_until_settled(stack, user)
    stack.emulation.wait_idle(user)


def test_throttling_of_the_jobs_table_past_the_sdks_retries_is_absorbed(stack: Stack) -> None:
    user = stack.new_user()
    stack.anthropic.default = scripted(
        [tool_use(spawn("Say hi.", "Hi")), text("Started.")], lambda _request: text("Hi!")
    )
    for function in ("RunToolsFunction", "LoadContextFunction", "CallModelFunction", "FinishTurnFunction"):
        stack.emulation.throttle("JobsTable", 1, function=function)
    stack.say(user, "in the background say hi")
    wait_for_reply(stack, user, "is done")
    wait_until_settled(stack, user)
    stack.emulation.wait_idle(user)
    assert {t[0] for t in stack.emulation.throttled if t[1] == "JobsTable"} >= {
        "RunToolsFunction",
        "LoadContextFunction",
        "FinishTurnFunction",
    }
    assert len(jobs_of(stack, user)) == 1 and len(job_executions(stack, user)) == 1
    assert sum("is done" in reply for reply in stack.replies(user)) == 1
