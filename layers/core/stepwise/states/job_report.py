"""How a background job ends: its record gets its ending once, and its report enters the chat's inbox as a
message of kind `job`, answered in turn like any message (docs/jobs.md).

FinishTurn reports a job that finished (done, out of time, over the budget) or failed (FailTurn); RecoverChat
reports one whose execution failed, timed out or was stopped. Both go through `report_job`: the first ending
recorded stays (`JobStore.finish`), and the inbox id comes from the job's execution and its recorded end, so
retries and a recovery after a finish give one report.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from datetime import datetime
from typing import TYPE_CHECKING

from aws_lambda_powertools import Logger

from stepwise.ids import iso_utc
from stepwise.inbox.models import JobEnded, QueuedMessage, outside_update_id
from stepwise.states.contracts import FinishTurnInput, FinishTurnOutput
from stepwise.states.job_turn import job_figures

if TYPE_CHECKING:
    from collections.abc import Sequence

    from stepwise.jobs.models import Job, JobStatus
    from stepwise.states.services import TurnServices
    from stepwise.turn_records.models import ModelStep
    from stepwise.turn_ref import TurnRef

logger = Logger(child=True)

HEADLINES: dict[str, str] = {
    "done": "✅ Background job #{number} “{title}” is done",
    "failed": "⚠️ Background job #{number} “{title}” failed",
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


def finish_job(request: FinishTurnInput, services: TurnServices) -> FinishTurnOutput:
    """FinishTurn (and FailTurn, FinishTurnUndelivered) of a job: its ending and report (nothing is sent to
    Telegram from here, and the chat's lease is not the job's to free)."""
    turn = request.turn
    reply = services.turns.get_reply(turn.turn_id)
    if request.error is not None:
        logger.warning("background job failed", extra={"error": request.error})
        status: JobStatus = "failed"
    elif reply is None:
        status = "failed"  # nothing to report: the job's record was gone or it had ended (see start_job)
    else:
        status = ENDED_BY_SOURCE.get(reply.source, "done")
    text = reply.text if reply is not None and request.error is None else None
    next_turn = report_job(turn, status, text, services)
    return FinishTurnOutput(source=reply.source if reply is not None else None, next_turn=next_turn)


def recover_job(turn: TurnRef, execution_status: str, services: TurnServices) -> FinishTurnOutput:
    """A job's execution failed, timed out or was stopped (/jobs stop): an approval it was waiting for is
    closed (its buttons go), and its report says how it ended and what it did."""
    status = ENDED_BY_EXECUTION.get(execution_status, "failed")
    logger.warning("recovered a background job that did not finish", extra={"status": execution_status})
    close_pending_approvals(turn, services)
    return FinishTurnOutput(next_turn=report_job(turn, status, None, services))


def close_pending_approvals(turn: TurnRef, services: TurnServices) -> None:
    """Expire the approval requests of a job that ended while waiting on them (its message then says so,
    without buttons). Best effort: a press on a stale request changes nothing."""
    from stepwise.approvals import lifecycle

    now = iso_utc(services.clock())
    for step in services.turns.steps(turn.turn_id):
        if step.approval_id is None or step.tool_results:
            continue
        try:
            lifecycle.settle(services.approvals, services.telegram, step.approval_id, now, STOPPED_APPROVAL)
        except Exception as error:
            logger.warning("a stopped job's approval was not closed", extra={"error": str(error)})


def report_job(turn: TurnRef, status: JobStatus, text: str | None, services: TurnServices) -> str | None:
    """Record the job's ending (the first one recorded stays) and put its report in the chat's inbox, which
    starts the chat's next turn unless one runs; returns that turn's name."""
    assert turn.job is not None
    if services.jobs is None:
        logger.error("a job ended where no jobs' table is configured")
        return None
    job = services.jobs.get(turn.user_id, turn.job)
    if job is None:
        logger.error("no record of this job: no report", extra={"job": turn.job})
        return None
    if job.running:
        steps = services.turns.steps(turn.turn_id)
        job = services.jobs.finish(
            job.user_id, job.number, status, report_text(job, status, text, steps), iso_utc(services.clock())
        )
    message = report_message(job)
    admitted = services.sequencer().admit(message)
    logger.info(
        "background job reported", extra={"job": job.number, "status": job.status, "admitted": admitted}
    )
    return admitted


def report_message(job: Job) -> QueuedMessage:
    """The inbox message of an ended job: the same id and place for every attempt."""
    assert job.finished_at is not None
    finished = datetime.fromisoformat(job.finished_at)
    nonce = int(hashlib.sha256(job.execution.encode()).hexdigest()[:8], 16)
    return QueuedMessage(
        chat_id=job.chat_id,
        update_id=outside_update_id(int(finished.timestamp()), nonce),
        user_id=job.user_id,
        id=f"job{job.number}-{job.execution[-16:]}",
        text=job.report,
        received_at=job.finished_at,
        kind="job",
        job=JobEnded(number=job.number, title=job.title, status=job.status),
    )


def report_text(job: Job, status: JobStatus, text: str | None, steps: Sequence[ModelStep]) -> str:
    """The report the chat gets: how the job ended, what it cost, and its result or what it did."""
    rounds, tokens, cost_nano_usd = job_figures(steps)
    cost = cost_nano_usd / 1e9
    headline = HEADLINES[status].format(number=job.number, title=job.title)
    figures = f"{rounds} tool round{'s' if rounds != 1 else ''}, {tokens:,} tokens, about ${cost:.4f}"
    lines = [f"{headline} ({figures})."]
    if status == "done" and text:
        return f"{lines[0]}\n\n{text}"
    if text:
        lines.append(text)
    lines.append(what_was_done(steps))
    return "\n\n".join(lines)


def what_was_done(steps: Sequence[ModelStep]) -> str:
    """The job's tool calls in a line: those that worked, counted by tool, those that did not, and those left
    without an answer (waiting for approval when the job ended)."""
    worked: Counter[str] = Counter()
    failed: Counter[str] = Counter()
    waiting: Counter[str] = Counter()
    for step in steps:
        results = {block.get("tool_use_id"): block for block in step.tool_results}
        results.update(step.partial_results)
        for call in step.tool_uses:
            result = results.get(call["id"])
            if result is None:
                (waiting if step.approval_id else failed)[call["name"]] += 1
            else:
                (failed if result.get("is_error") else worked)[call["name"]] += 1
    if not (worked or failed or waiting):
        return "It had not used any tools."
    parts = [f"What it did: {', '.join(_counted(worked)) or 'nothing'}."]
    if failed or waiting:
        undone = _counted(failed) + [f"{call} (waiting for approval)" for call in _counted(waiting)]
        parts.append(f"Not done: {', '.join(undone)}.")
    return " ".join(parts)


def _counted(counts: Counter[str]) -> list[str]:
    return [name if n == 1 else f"{name} ×{n}" for name, n in sorted(counts.items())]  # noqa: RUF001
