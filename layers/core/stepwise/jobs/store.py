"""The port of the jobs' store (JobsTable)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from stepwise.jobs.models import Job, JobStatus


class JobStore(Protocol):
    """Each user's jobs, numbered from 1, and how each ended."""

    def next_number(self, user_id: int) -> int:
        """A new job number for the user (1, 2, …; a number taken by a call that then failed is skipped)."""
        ...

    def create(self, job: Job) -> Job:
        """Store a new job; when the user has a job of that number already (a retried start), that one is
        kept and returned."""
        ...

    def get(self, user_id: int, number: int) -> Job | None:
        """The user's job of that number; None when there is none."""
        ...

    def recent(self, user_id: int, limit: int = 10) -> list[Job]:
        """The user's newest jobs, newest first."""
        ...

    def progress(self, user_id: int, number: int, tool_rounds: int, tokens: int, cost_nano_usd: int) -> None:
        """Set a running job's counters (absolute values: setting them twice is harmless); a job that has
        ended is left as it is."""
        ...

    def finish(self, user_id: int, number: int, status: JobStatus, report: str, finished_at: str) -> Job:
        """End a running job with `status` and its `report`; returns the job as stored. A job that has ended
        already keeps its first ending (status, report and time), which is returned. Raises KeyError when the
        user has no job of that number."""
        ...
