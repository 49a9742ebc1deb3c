"""/jobs: the user's running and recent background jobs, and `/jobs stop <n>` (docs/jobs.md)."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from stepwise.commands.handlers import CommandRequest
    from stepwise.jobs.models import Job

logger = logging.getLogger(__name__)

LISTED = 10
USAGE = "Use /jobs to list your background jobs, or /jobs stop <number> to stop one (e.g. /jobs stop 3)."
STATES = {
    "running": "running",
    "done": "done",
    "not_done": "could not do it",
    "failed": "failed",
    "timed_out": "out of time",
    "stopped": "stopped",
    "over_budget": "stopped at the usage limit",
}


def jobs(request: CommandRequest) -> str:
    """List the user's newest jobs, or stop one of theirs."""
    store = request.services.stores.jobs
    if store is None:
        return "Background jobs are not enabled in this deployment."
    words = request.args.split()
    if not words:
        return _listing(
            store.recent(request.meta.user_id, LISTED), request.services.settings.limits.jobs.max_jobs
        )
    if words[0].lower() != "stop" or len(words) != 2:
        return USAGE
    number_text = words[1].lstrip("#")
    if not number_text.isdigit() or not 1 <= int(number_text) <= 10**9:
        return USAGE
    return _stop(request, int(number_text))


def _stop(request: CommandRequest, number: int) -> str:
    store = request.services.stores.jobs
    assert store is not None
    job = store.get(request.meta.user_id, number)
    if job is None:
        return f"You have no background job #{number}. /jobs lists yours."
    if not job.running:
        return f"Job #{number} “{job.title}” has ended already ({STATES[job.status]})."
    stopper = request.services.outbound.stopper
    stopped = stopper is not None and stopper().stop(job.execution, f"/jobs stop {number}")
    logger.info("job stop asked", extra={"job": number, "stopped": stopped})
    if stopped:
        return f"Stopping job #{number} “{job.title}”. Its report, with what it did, follows."
    return f"Job #{number} “{job.title}” is finishing already; its report follows."


def _listing(recent: list[Job], max_jobs: int) -> str:
    if not recent:
        return (
            "You have no background jobs. Ask me to do something bigger “in the background” (say, “in the "
            "background: go through my tasks and group them into projects”) and I'll start one."
        )
    running = sum(1 for job in recent if job.running)
    lines = [f"Your background jobs, newest first ({running} of at most {max_jobs} running):"]
    for job in recent:
        rounds = f"{job.tool_rounds} tool round{'s' if job.tool_rounds != 1 else ''}"
        lines.append(
            f"- #{job.number} {job.title}: {STATES[job.status]}, {rounds}, {job.tokens:,} tokens, "
            f"${job.cost_nano_usd / 1e9:.4f}"
        )
    if running:
        lines.append("Stop one with /jobs stop <number>.")
    return "\n".join(lines)
