"""A background job's record: what it was asked, how far it got, how it ended."""

import hashlib
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from stepwise.telegram.conversation import Conversation, Scope

# running: its execution works; the others are final (a job ends once: the first ending recorded stays).
# not_done: its model could not do the task (said so, or gave no answer); failed: it ended on an error.
JobStatus = Literal["running", "done", "not_done", "failed", "timed_out", "stopped", "over_budget"]
FINAL_STATUSES: frozenset[str] = frozenset(
    {"done", "not_done", "failed", "timed_out", "stopped", "over_budget"}
)
JOB_PREFIX = "job-"
# The tool a job's model calls instead of answering when it cannot do its task (`stepwise.tools.job_tools`).
CANNOT_DO = "cannot_do"


@dataclass(frozen=True)
class JobLimits:
    """The deployment's limits of background jobs (docs/jobs.md): MAX_JOBS, JOB_MAX_TOOL_STEPS and
    JOB_TIMEOUT_MINUTES."""

    max_jobs: int = 3
    max_tool_steps: int = 20
    timeout_minutes: int = 15

    def approval_wait(self, approval_timeout_seconds: int) -> int:
        """How long a job waits for a tap: APPROVAL_TIMEOUT_SECONDS, but never past its deadline."""
        return min(approval_timeout_seconds, self.timeout_minutes * 60)


class Job(BaseModel):
    """One job of a user, numbered per user (#1, #2…) as `/jobs` shows it. `execution` is the name of its
    Step Functions execution, derived from the tool call that started it (`job_execution_name`)."""

    model_config = ConfigDict(defer_build=True)

    user_id: int
    number: int = Field(ge=1)
    chat_id: int
    topic: int | None = None  # the topic that started it: its report goes there
    account: int | None = None  # the owner whose business account the chat is in; None: a chat with the bot
    execution: str = Field(min_length=1, max_length=80)
    title: str
    task: str
    parent_turn_id: str
    created_at: str  # ISO 8601 UTC
    deadline: str  # ISO 8601 UTC: the job stops at its next step past this
    status: JobStatus = "running"
    tool_rounds: int = Field(default=0, ge=0)
    tokens: int = Field(default=0, ge=0)  # input, output and cache tokens of its model calls
    cost_nano_usd: int = Field(default=0, ge=0)
    finished_at: str | None = None
    report: str = ""  # the message its chat gets when it ends

    @property
    def running(self) -> bool:
        return self.status == "running"

    @property
    def scope(self) -> Scope:
        """Whose the job is: the conversation that started it (its report goes there) and the user who asked
        for it; it reads and writes what that conversation's turns do."""
        return Scope(Conversation(self.chat_id, self.topic, self.account), self.user_id)


def job_execution_name(call_id: str) -> str:
    """The execution name of the job a tool call starts: the same for every retry of that call (the ledger's
    call id is the parent turn's id and the model's tool_use id), within Step Functions' 80 characters."""
    return JOB_PREFIX + hashlib.sha256(call_id.encode()).hexdigest()[:40]


def is_job_execution(name: str) -> bool:
    """Whether an execution (a turn id) is a job's."""
    return name.startswith(JOB_PREFIX)
