"""A background job's own execution, in the states it shares with a chat's turn (docs/jobs.md): its policy,
`JobTurn` (`stepwise.states.policy`).

A job differs from a chat's turn in what its policy answers: it starts from its record, not from the chat's
inbox (`start_job`, in LoadContext); its model sees only its task, with a section of the prompt saying it is a
job (`job_history`, `job_section`); it has its own tools (no `spawn_job`, and `cannot_do`) and limits,
JOB_MAX_TOOL_STEPS and a deadline, and the daily token budget stops it between steps (`job_must_stop`, in
CallModel); its model may say that it cannot do the task (the `cannot_do` tool), which ends it (`job_gave_up`,
in CallModel); and it keeps its counters on its record for /jobs (`record_progress`). It never holds the
chat's lease: its report reaches the chat through the inbox (`stepwise.states.job_report`).
"""

from __future__ import annotations

import logging
from datetime import datetime
from typing import TYPE_CHECKING

from stepwise.history.models import StoredMessage
from stepwise.jobs.models import CANNOT_DO
from stepwise.services import JOB_STARTING_TOOLS
from stepwise.states.approve_deny import show_approve_deny
from stepwise.states.contracts.base import Next
from stepwise.states.job_report import finish_job, job_figures, recover_job
from stepwise.tools.job_tools import CANNOT_DO_TOOL
from stepwise.turn.ids import iso_utc
from stepwise.turn_records.models import JobRun, Reply, TurnMeta
from stepwise.usage.budget import budget_message, is_over_budget

if TYPE_CHECKING:
    from collections.abc import Sequence

    from stepwise.services import TurnServices
    from stepwise.states.contracts.finish_turn import FinishTurnInput, FinishTurnOutput
    from stepwise.tools.registry import ToolRegistry
    from stepwise.turn.ref import TurnRef
    from stepwise.turn_records.models import ModelStep, ReplySource

logger = logging.getLogger(__name__)


def start_job(turn: TurnRef, services: TurnServices) -> Next:
    """LoadContext of a job: its meta from its record (a retry finds the meta it wrote), then the model; a job
    whose record is gone, or that has ended already, goes straight to FinishTurn."""
    assert turn.job is not None
    job = services.stores.jobs.get(turn.user_id, turn.job) if services.stores.jobs is not None else None
    if job is None:
        logger.error("no record of this job: it ends", extra={"job": turn.job})
        return Next(route="reply")  # not `error`: FailTurn needs the error a Catch keeps, and none was caught
    if not job.running:
        logger.info("the job has ended already", extra={"job": job.number, "status": job.status})
        return Next(route="reply")
    try:
        meta = services.stores.turns.get_meta(turn.turn_id)
    except KeyError:
        profile = services.stores.profiles.profile(turn.user_id)
        scope = job.scope
        meta = TurnMeta(
            turn_id=turn.turn_id,
            chat_id=scope.conversation.chat_id,
            topic=scope.conversation.topic,
            account=scope.conversation.account,
            user_id=scope.user_id,
            update_id=0,
            user_message_id=job.execution,
            first_key="",
            last_key="",
            created_at=job.created_at,
            timezone=profile.timezone or services.settings.deployment.default_timezone,
            timezone_set=profile.timezone is not None,
            has_accounts=bool(profile.accounts),
            kind=JobRun(number=job.number, title=job.title, task=job.task, deadline=job.deadline),
        )
        services.stores.turns.put_meta(meta)
    logger.info("background job started", extra={"job": job.number})
    return job_must_stop(meta, services) or Next(route="model")


def job_history(meta: TurnMeta, job: JobRun) -> list[StoredMessage]:
    """What a job's model sees as the conversation: its task, as the user's one message."""
    return [
        StoredMessage(
            id=meta.user_message_id,
            chat_id=meta.chat_id,
            topic=meta.topic,
            account=meta.account,
            role="user",
            content=job.task,
            created_at=meta.created_at,
        )
    ]


def job_section(job: JobRun, max_tool_steps: int) -> str:
    """The per-turn section of a job's prompt: what it is, and how to finish."""
    return (
        f"## Background job\nYou are background job #{job.number} “{job.title}”, started by the "
        "assistant for the user. The user's message is the job's task. Nobody is watching: do not ask "
        f"questions, do the work with the tools (at most {max_tool_steps} tool rounds, until "
        f"{job.deadline}), then answer with the result, written for the user: it is posted in their "
        "chat as the job's report. Tools that change data for good wait for the user's tap in the chat; if "
        "one is denied, leave that part and say so in the report. If you cannot do the task at all (it is "
        f"unclear to you, or no tool can do what it needs), call {CANNOT_DO} with the reason instead of "
        "answering; never answer as if work were done that no tool did."
    )


def job_must_stop(meta: TurnMeta, services: TurnServices) -> Next | None:
    """Before a job's model call: past its deadline, or with the user's daily token budget spent, the job
    stops (its reply says why, and FinishTurn reports it); None to go on."""
    job = _job(meta)
    now = services.clock()
    if now >= datetime.fromisoformat(job.deadline):
        minutes = services.settings.limits.jobs.timeout_minutes
        text = f"It ran out of time: a job may work for {minutes} minutes (JOB_TIMEOUT_MINUTES)."
        _stop(meta, services, text, "job_timeout")
        logger.warning("background job past its deadline", extra={"job": job.number})
        return Next(route="reply")
    if services.stores.usage is not None:
        used = is_over_budget(
            services.stores.usage, meta.user_id, now, services.settings.limits.daily_token_budget
        )
        if used is not None:
            _stop(
                meta,
                services,
                budget_message(
                    services.settings.limits.daily_token_budget, used, now, meta.timezone, meta.scope.member
                ),
                "budget",
            )
            logger.warning("background job stopped by the daily token budget", extra={"job": job.number})
            return Next(route="reply")
    return None


def job_gave_up(meta: TurnMeta, steps: Sequence[ModelStep], services: TurnServices) -> Next | None:
    """Before a job's model call: when its model called `cannot_do` in the round just run, the job ends
    without another call (its reply is the model's reason, and FinishTurn reports the task as not done);
    None to go on."""
    reason = declared_reason(steps[-1]) if steps else None
    if reason is None:
        return None
    job = _job(meta)
    _stop(meta, services, reason, "job_not_done")
    logger.info("background job says it cannot do its task", extra={"job": job.number})
    return Next(route="reply")


def declared_reason(step: ModelStep) -> str | None:
    """The reason of a `cannot_do` call of the step that ran (its result is no error), else None."""
    results = {block["tool_use_id"]: block for block in step.tool_results}
    for call in step.tool_uses:
        result = results.get(call["id"])
        if call["name"] == CANNOT_DO and result is not None and not result["is_error"]:
            return " ".join(str(call["input"].get("reason", "")).split())
    return None


def _stop(meta: TurnMeta, services: TurnServices, text: str, source: ReplySource) -> None:
    if services.stores.turns.get_reply(meta.turn_id) is not None:
        return
    services.stores.turns.put_reply(
        meta.turn_id,
        Reply(
            text=text,
            source=source,
            message_id=services.new_id(),
            created_at=iso_utc(services.clock()),
        ),
    )


def record_progress(meta: TurnMeta, steps: Sequence[ModelStep], services: TurnServices) -> None:
    """Keep the job's tool rounds, tokens and cost on its record (absolute values, from its steps: a retried
    state writes the same). Best effort: /jobs shows them, nothing depends on them."""
    job = _job(meta)
    if services.stores.jobs is None:
        return
    try:
        services.stores.jobs.progress(meta.user_id, job.number, *job_figures(steps))
    except Exception as error:
        logger.warning("job progress not kept", extra={"error": str(error)})


def _job(meta: TurnMeta) -> JobRun:
    """The job a job's turn runs (`JobTurn` is the policy of this kind only: `policy_of`)."""
    assert isinstance(meta.kind, JobRun)
    return meta.kind


class JobTurn:
    """The policy of a background job's own execution (see the module docstring)."""

    holds_chat = False
    shows_progress = False

    def __init__(self) -> None:
        self._tools: tuple[ToolRegistry, ToolRegistry] | None = None  # the chat's tools, and the job's

    def start(self, turn: TurnRef, services: TurnServices) -> Next | None:
        return start_job(turn, services)

    def history(self, meta: TurnMeta, services: TurnServices) -> list[StoredMessage]:
        return job_history(meta, _job(meta))

    def sections(self, meta: TurnMeta, max_steps: int) -> list[str]:
        return [job_section(_job(meta), max_steps)]

    def tools(self, meta: TurnMeta, services: TurnServices) -> ToolRegistry:
        """The chat's tools but `spawn_job`, and with `cannot_do` (a job's model says with it that it cannot
        do its task)."""
        tools = services.tools.registry_for(meta.scope, meta.has_accounts)
        if self._tools is None or self._tools[0] is not tools:
            self._tools = (tools, tools.without(JOB_STARTING_TOOLS).with_tools([CANNOT_DO_TOOL]))
        return self._tools[1]

    def max_steps(self, services: TurnServices) -> int:
        return services.settings.limits.jobs.max_tool_steps

    def before_call(self, meta: TurnMeta, steps: Sequence[ModelStep], services: TurnServices) -> Next | None:
        return job_must_stop(meta, services) or job_gave_up(meta, steps, services)

    def after_call(self, meta: TurnMeta, steps: Sequence[ModelStep], services: TurnServices) -> Next | None:
        record_progress(meta, steps, services)
        return None

    def after_tools(self, meta: TurnMeta, step: ModelStep, services: TurnServices) -> bool:
        return False

    def show_approval(self, approval_id: str, task_token: str, services: TurnServices) -> int:
        return show_approve_deny(approval_id, task_token, self.approval_wait(services), services)

    def approval_wait(self, services: TurnServices) -> int:
        """At most until the job's deadline (its execution's input says how long)."""
        return services.settings.limits.jobs.approval_wait(services.settings.limits.approval_timeout_seconds)

    def finish(self, request: FinishTurnInput, services: TurnServices) -> FinishTurnOutput | None:
        """Its ending and report (nothing is sent to Telegram, and the chat's lease is not the job's)."""
        return finish_job(request, services)

    def recover(self, turn: TurnRef, status: str, services: TurnServices) -> FinishTurnOutput | None:
        return recover_job(turn, status, services)


JOB_TURN = JobTurn()
