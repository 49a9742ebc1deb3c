"""How a background job ends: its record gets its ending once, and its report enters the chat's inbox as a
message of kind `job`, answered in turn like any message (docs/jobs.md).

FinishTurn reports a job that finished (done, not done, out of time, over the budget) or failed (FailTurn);
RecoverChat reports one whose execution failed, timed out or was stopped. Both go through `report_job`: the
first ending recorded stays (`JobStore.finish`), and the inbox id comes from the job's execution and its
recorded end, so retries and a recovery after a finish give one report. Whether a finished job did its task
is decided from what its turn recorded (`job_outcome`), never from the wording of its answer.
"""

from __future__ import annotations

import hashlib
import logging
from collections import Counter
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from stepwise.approvals import lifecycle
from stepwise.inbox.models import JobEnded, QueuedMessage, outside_update_id
from stepwise.jobs.models import CANNOT_DO
from stepwise.states.contracts.finish_turn import FinishTurnInput, FinishTurnOutput
from stepwise.turn.ids import iso_utc

if TYPE_CHECKING:
    from collections.abc import Sequence

    from stepwise.jobs.models import Job, JobStatus
    from stepwise.services import TurnServices
    from stepwise.turn.ref import TurnRef
    from stepwise.turn_records.models import ModelStep, Reply

logger = logging.getLogger(__name__)

HEADLINES: dict[str, str] = {
    "done": "✅ Background job #{number} “{title}” is done",
    "not_done": "⚠️ Background job #{number} “{title}” could not do its task",
    "failed": "⚠️ Background job #{number} “{title}” could not do its task",
    "timed_out": "⏱ Background job #{number} “{title}” ran out of time",
    "stopped": "⏹ Background job #{number} “{title}” was stopped",
    "over_budget": "⏸ Background job #{number} “{title}” stopped at today's usage limit",
}
STOPPED_APPROVAL = "⏹ The job ended before an answer — nothing was changed."
ENDED_BY_EXECUTION: dict[str, JobStatus] = {
    "FAILED": "failed",
    "TIMED_OUT": "timed_out",
    "ABORTED": "stopped",
}
ENDED_BY_SOURCE: dict[str, JobStatus] = {"job_timeout": "timed_out", "budget": "over_budget"}
# The endings whose report is one line that says why (and what it did, if it used tools).
COULD_NOT: frozenset[str] = frozenset({"not_done", "failed"})
NO_ANSWER = "its model gave no answer."
NONE_WORKED = "none of its tool calls worked."
DECLINED = "its model declined the task."
STOPPED_BY_ERROR = "an error stopped it."
ERROR_REASONS: dict[str, str] = {
    "ModelTransientError": "the language model did not answer, even after retries.",
    "ModelRateLimitedError": "the language model did not answer, even after retries.",
    "ModelPermanentError": "the language model's API rejected the request.",
    "States.Timeout": "one of its steps took too long.",
}
MAX_WHY = 300


def finish_job(request: FinishTurnInput, services: TurnServices) -> FinishTurnOutput:
    """FinishTurn (and FailTurn, FinishTurnUndelivered) of a job: its ending and report (nothing is sent to
    Telegram from here, and the chat's lease is not the job's to free)."""
    turn = request.turn
    reply = services.stores.turns.get_reply(turn.turn_id)
    if request.error is not None:
        logger.warning("background job failed", extra={"error": request.error})
    ending = job_outcome(reply, request.error, services.stores.turns.steps(turn.turn_id))
    next_turn = report_job(turn, ending, services)
    return FinishTurnOutput(source=reply.source if reply is not None else None, next_turn=next_turn)


@dataclass(frozen=True)
class Ending:
    """How a job ended: its status, the text its report shows (its answer, or what stopped it), and for a job
    that could not do its task, why, in a few words."""

    status: JobStatus
    text: str | None = None
    why: str | None = None


def job_outcome(reply: Reply | None, error: str | None, steps: Sequence[ModelStep]) -> Ending:
    """How a job that reached FinishTurn ended, from what its turn recorded (never from its answer's words):

    - it ended on an error (FailTurn): failed, why from the error's name (`error_reason`);
    - without a reply: failed (its record was gone, or it had ended already: see `start_job`);
    - stopped by its deadline or the budget: timed out or over the budget, with the reply that says so;
    - its model called `cannot_do`: not done, why in the model's words;
    - its model's last answer was a refusal, or had no text: not done;
    - it called tools and none of them worked (each failed, or was denied or unanswered): not done, with
      its answer;
    - else done, with its answer, whether or not it used tools (a task may need none).
    """
    if error is not None:
        return Ending("failed", why=error_reason(error))
    if reply is None:
        return Ending("failed")
    if reply.source == "job_not_done":
        return Ending("not_done", why=reply.text)
    if (ended := ENDED_BY_SOURCE.get(reply.source)) is not None:
        return Ending(ended, reply.text)
    last = steps[-1] if steps else None
    if last is not None and last.stop_reason == "refusal":
        return Ending("not_done", why=DECLINED)
    if last is not None and not last.text:
        return Ending("not_done", why=NO_ANSWER)
    if used_tools(steps) and not any_worked(steps):
        return Ending("not_done", reply.text, NONE_WORKED)
    return Ending("done", reply.text)


def error_reason(error: str) -> str:
    """Why a job stopped on `error` (the name of the error that failed its state), for its report."""
    return ERROR_REASONS.get(error, f"an error stopped it ({error}).")


def recover_job(turn: TurnRef, execution_status: str, services: TurnServices) -> FinishTurnOutput:
    """A job's execution failed, timed out or was stopped (/jobs stop): an approval it was waiting for is
    closed (its buttons go), and its report says how it ended and what it did."""
    status = ENDED_BY_EXECUTION.get(execution_status, "failed")
    logger.warning("recovered a background job that did not finish", extra={"status": execution_status})
    close_pending_approvals(turn, services)
    return FinishTurnOutput(next_turn=report_job(turn, Ending(status), services))


def close_pending_approvals(turn: TurnRef, services: TurnServices) -> None:
    """Expire the approval requests of a job that ended while waiting on them (its message then says so,
    without buttons). Best effort: a press on a stale request changes nothing."""
    now = iso_utc(services.clock())
    for step in services.stores.turns.steps(turn.turn_id):
        if step.approval_id is None or step.tool_results:
            continue
        try:
            lifecycle.settle(
                services.stores.approvals, services.outbound.telegram, step.approval_id, now, STOPPED_APPROVAL
            )
        except Exception as error:
            logger.warning("a stopped job's approval was not closed", extra={"error": str(error)})


def report_job(turn: TurnRef, ending: Ending, services: TurnServices) -> str | None:
    """Record the job's ending (the first one recorded stays) and put its report in the chat's inbox, which
    starts the chat's next turn unless one runs; returns that turn's name."""
    assert turn.job is not None
    if services.stores.jobs is None:
        logger.error("a job ended where no jobs' table is configured")
        return None
    job = services.stores.jobs.get(turn.user_id, turn.job)
    if job is None:
        logger.error("no record of this job: no report", extra={"job": turn.job})
        return None
    if job.running:
        steps = services.stores.turns.steps(turn.turn_id)
        job = services.stores.jobs.finish(
            job.user_id, job.number, ending.status, report_text(job, ending, steps), iso_utc(services.clock())
        )
    message = report_message(job)
    admitted = services.outbound.sequencer().admit(message)
    logger.info(
        "background job reported", extra={"job": job.number, "status": job.status, "admitted": admitted}
    )
    return admitted


def report_message(job: Job) -> QueuedMessage:
    """The inbox message of an ended job: the same id and place for every attempt."""
    assert job.finished_at is not None
    finished = datetime.fromisoformat(job.finished_at)
    nonce = int(hashlib.sha256(job.execution.encode()).hexdigest()[:8], 16)
    scope = job.scope
    return QueuedMessage(
        chat_id=scope.conversation.chat_id,
        topic=scope.conversation.topic,
        account=scope.conversation.account,
        update_id=outside_update_id(int(finished.timestamp()), nonce),
        user_id=scope.user_id,
        id=f"job{job.number}-{job.execution[-16:]}",
        text=job.report,
        received_at=job.finished_at,
        kind=JobEnded(number=job.number, title=job.title, status=job.status),
    )


def report_text(job: Job, ending: Ending, steps: Sequence[ModelStep]) -> str:
    """The report the chat gets: how the job ended, what it cost, and its result or what it did. A job that
    could not do its task says so and why in its first line; its answer (if any) and what it did (if it used
    tools) follow."""
    rounds, tokens, cost_nano_usd = job_figures(steps)
    cost = cost_nano_usd / 1e9
    headline = HEADLINES[ending.status].format(number=job.number, title=job.title)
    figures = f"{rounds} tool round{'s' if rounds != 1 else ''}, {tokens:,} tokens, about ${cost:.4f}"
    text = ending.text
    if ending.status in COULD_NOT:
        lines = [f"{headline} ({figures}): {one_line(ending.why or STOPPED_BY_ERROR)}"]
        lines += [text] if text else []
        lines += [what_was_done(steps)] if used_tools(steps) else []
        return "\n\n".join(lines)
    lines = [f"{headline} ({figures})."]
    if ending.status == "done" and text:
        return f"{lines[0]}\n\n{text}"
    if text:
        lines.append(text)
    lines.append(what_was_done(steps))
    return "\n\n".join(lines)


def job_figures(steps: Sequence[ModelStep]) -> tuple[int, int, int]:
    """A job's tool rounds, tokens and cost (nano-dollars) so far, from its model steps (a round that only
    said it cannot do the task is no work: not counted)."""
    return (
        sum(1 for step in steps if any(call["name"] != CANNOT_DO for call in step.tool_uses)),
        sum(step.tokens for step in steps),
        sum(step.cost_nano_usd for step in steps),
    )


def one_line(text: str) -> str:
    """A reason as one sentence of a line: its whitespace folded, at most MAX_WHY characters, a final stop."""
    folded = " ".join(text.split())
    if len(folded) > MAX_WHY:
        folded = folded[: MAX_WHY - 1].rstrip() + "…"
    return folded if folded.endswith((".", "!", "?", "…")) else f"{folded}."


def used_tools(steps: Sequence[ModelStep]) -> bool:
    """Whether the job called any tool (saying that it cannot do the task is no use of one)."""
    return any(call["name"] != CANNOT_DO for step in steps for call in step.tool_uses)


def any_worked(steps: Sequence[ModelStep]) -> bool:
    """Whether any of the job's tool calls (other than `cannot_do`) has a result that is no error."""
    for step in steps:
        results = {block["tool_use_id"]: block for block in step.tool_results}
        results.update(step.partial_results)
        for call in step.tool_uses:
            result = results.get(call["id"])
            if call["name"] != CANNOT_DO and result is not None and not result["is_error"]:
                return True
    return False


def what_was_done(steps: Sequence[ModelStep]) -> str:
    """The job's tool calls in a line: those that worked, counted by tool, those that did not, and those left
    without an answer (waiting for approval when the job ended)."""
    worked: Counter[str] = Counter()
    failed: Counter[str] = Counter()
    waiting: Counter[str] = Counter()
    for step in steps:
        results = {block["tool_use_id"]: block for block in step.tool_results}
        results.update(step.partial_results)
        for call in step.tool_uses:
            if call["name"] == CANNOT_DO:
                continue
            result = results.get(call["id"])
            if result is None:
                (waiting if step.approval_id else failed)[call["name"]] += 1
            else:
                (failed if result["is_error"] else worked)[call["name"]] += 1
    if not (worked or failed or waiting):
        return "It had not used any tools."
    parts = [f"What it did: {', '.join(_counted(worked)) or 'nothing'}."]
    if failed or waiting:
        undone = _counted(failed) + [f"{call} (waiting for approval)" for call in _counted(waiting)]
        parts.append(f"Not done: {', '.join(undone)}.")
    return " ".join(parts)


def _counted(counts: Counter[str]) -> list[str]:
    return [name if n == 1 else f"{name} ×{n}" for name, n in sorted(counts.items())]  # noqa: RUF001
