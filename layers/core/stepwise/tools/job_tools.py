"""The spawn_job tool: hand a task bigger than one turn to a background job (docs/jobs.md); and cannot_do, the
tool a job's model calls instead of answering when it cannot do its task.

A job is its own execution of the turns' state machine, named after the tool call that starts it
(`job_execution_name`): a retried call starts no second job. The record (JobsTable) and the execution cannot
be written in one transaction, so the tool declares an `intent`: the registry records the job's number and the
result text first, then `run` creates the record and starts the execution, both safe to repeat. The tool
returns at once; the job's report enters the chat's inbox when it ends (`stepwise.states.job_report`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import partial
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from stepwise.jobs.models import CANNOT_DO, Job, JobLimits, is_job_execution, job_execution_name
from stepwise.tools.registry import EffectIncomplete, Intent, Tool, ToolContext, ToolError
from stepwise.turn.ids import iso_utc
from stepwise.turn.ref import TurnRef
from stepwise.turn.start import Limits, TurnStart

if TYPE_CHECKING:
    from collections.abc import Callable

    from stepwise.jobs.store import JobStore
    from stepwise.turn.workflow import TurnStarter

MAX_TASK = 4000
MAX_TITLE = 60
MAX_REASON = 300


@dataclass(frozen=True)
class JobSetup:
    """What spawn_job is bound to: the jobs' store, the starter of executions (built on first use: its AWS
    client is not worth a cold start that runs no spawn_job), the jobs' limits and
    APPROVAL_TIMEOUT_SECONDS."""

    jobs: JobStore
    starter: Callable[[], TurnStarter]
    limits: JobLimits = field(default_factory=JobLimits)
    approval_timeout_seconds: int = 3600


class SpawnJobInput(BaseModel):
    model_config = ConfigDict(defer_build=True, extra="forbid")

    task: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=MAX_TASK)] = Field(
        description="The job's complete instruction: everything it needs to know, since it does not see this "
        "conversation (names, dates, the user's preferences, what to deliver)."
    )
    title: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=MAX_TITLE)] = (
        Field(description="A short title the user will recognise in /jobs and in the job's report.")
    )


class CannotDoInput(BaseModel):
    model_config = ConfigDict(defer_build=True, extra="forbid")

    reason: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=MAX_REASON)] = (
        Field(description="Why, in one short sentence for the user.")
    )


def _running(setup: JobSetup, user_id: int) -> int:
    return sum(1 for job in setup.jobs.recent(user_id, limit=50) if job.running)


def spawn_intent(setup: JobSetup, context: ToolContext, args: SpawnJobInput) -> Intent:
    """Refuse past MAX_JOBS running jobs or inside a job; else take the job's number (recorded as the intent's
    ref, so a retried call starts the same job) and say what the user will see."""
    if is_job_execution(context.turn_id):
        raise ToolError("A background job cannot start other jobs: do this part of the work yourself.")
    try:
        running = _running(setup, context.user_id)
    except Exception as error:  # nothing recorded yet: the state's retry asks again
        raise EffectIncomplete("the jobs' store could not be read") from error
    if running >= setup.limits.max_jobs:
        raise ToolError(
            f"Not started: {running} background jobs are running already, the most allowed. Tell the user to "
            "wait for one to finish, or to stop one with /jobs stop <number>."
        )
    try:
        number = setup.jobs.next_number(context.user_id)
    except Exception as error:
        raise EffectIncomplete("no job number could be taken") from error
    return Intent(
        result=(
            f"Started background job #{number} “{args.title}”: it works on its own (at most "
            f"{setup.limits.max_tool_steps} tool rounds and {setup.limits.timeout_minutes} minutes), and its "
            "report will arrive in this chat when it is done; /jobs shows its progress."
        ),
        ref=str(number),
    )


def spawn_job(setup: JobSetup, context: ToolContext, args: SpawnJobInput) -> str:
    """Create the job's record and start its execution (both are no-ops the second time). A failure of either
    fails the state, whose retry finishes the job's start under the recorded intent (a record without its
    execution would count against MAX_JOBS for nothing)."""
    assert context.recorded is not None  # the registry records the intent before the effect
    try:
        return _start(setup, context, args, int(context.recorded.ref))
    except Exception as error:
        raise EffectIncomplete("the job could not be started") from error


def _start(setup: JobSetup, context: ToolContext, args: SpawnJobInput, number: int) -> str:
    assert context.recorded is not None
    name = job_execution_name(context.call_id)
    started = datetime.fromisoformat(context.now)
    job = setup.jobs.create(
        Job(
            user_id=context.user_id,
            number=number,
            chat_id=context.scope.conversation.chat_id,
            topic=context.scope.conversation.topic,
            account=context.scope.conversation.account,
            execution=name,
            title=args.title,
            task=args.task,
            parent_turn_id=context.turn_id,
            created_at=context.now,
            deadline=iso_utc(started + timedelta(minutes=setup.limits.timeout_minutes)),
        )
    )
    start = TurnStart(
        turn=TurnRef(
            turn_id=job.execution,
            chat_id=job.chat_id,
            topic=job.topic,
            account=job.account,
            user_id=job.user_id,
            update_id=0,
            job=number,
        ),
        limits=Limits(approval_timeout_seconds=setup.limits.approval_wait(setup.approval_timeout_seconds)),
    )
    setup.starter().start(job.execution, start.model_dump(mode="json"))
    return context.recorded.result


def job_tools(setup: JobSetup) -> list[Tool[Any]]:
    return [
        Tool(
            name="spawn_job",
            description=(
                "Start a background job: a separate run of the assistant, with the same tools, that works on "
                f"`task` by itself (up to {setup.limits.max_tool_steps} tool rounds and "
                f"{setup.limits.timeout_minutes} minutes) and posts its report in this chat when it is done. "
                "Use it for work bigger than one answer (going through many tasks, research, planning with "
                "several steps) or when the user says 'in the background'. It returns at once: tell the user "
                "the job started, and do not do its work yourself. Several jobs may run at the same time."
            ),
            input_model=SpawnJobInput,
            run=partial(spawn_job, setup),
            intent=partial(spawn_intent, setup),
            writes=True,
        )
    ]


def cannot_do(context: ToolContext, args: CannotDoInput) -> str:
    """Nothing to do here: the job's next CallModel sees the call and ends the job (`states.job_turn`)."""
    return f"Noted: the job ends now, and its report says it could not do the task: {args.reason}"


CANNOT_DO_TOOL: Tool[CannotDoInput] = Tool(
    name=CANNOT_DO,
    description=(
        "Background jobs only: call it instead of answering when you cannot do the task at all (it is "
        "unclear, or no tool can do what it needs); not when a call failed or was denied, nor for a task "
        "that needs no tool. The job then ends, and its report gives the user your `reason`."
    ),
    input_model=CannotDoInput,
    run=cannot_do,
)
