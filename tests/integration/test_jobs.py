"""Background jobs through the real state machine: the wiring (spawn_job starts a job as its own Step
Functions execution, the parent turn answers at once, the job's report enters the chat's inbox and is answered
in turn and kept in the history, the job stored in its DynamoDB table), crashes of the state that starts a
job and of FinishTurn, and throttling of the jobs table. What jobs do (MAX_JOBS, approvals, /jobs and /jobs
stop, the deadline, the budget, a job that could not do its task, a report behind a command, order with the
user's messages, a check-in starting a job) is tested on the in-memory stack
(tests/behaviour/test_jobs.py)."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

from boto3.dynamodb.conditions import Key
from support.stack import Stack

from stepwise_local.anthropic_server import Scripted, last_user_text, text, tool_use

JOB_MARK = "## Background job"


def in_job(request: dict[str, Any]) -> bool:
    return JOB_MARK in json.dumps(request["messages"])


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
