"""An in-memory JobStore for unit tests and the local chat (same semantics as the DynamoDB adapter)."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from stepwise.jobs.models import Job, JobStatus


class InMemoryJobStore:
    """Jobs keyed by (user, number) and per-user counters in dicts (thread-safe, like DynamoDB's
    conditional writes)."""

    def __init__(self) -> None:
        self.jobs: dict[tuple[int, int], Job] = {}
        self.counters: dict[int, int] = {}
        self._lock = threading.Lock()

    def next_number(self, user_id: int) -> int:
        with self._lock:
            self.counters[user_id] = self.counters.get(user_id, 0) + 1
            return self.counters[user_id]

    def create(self, job: Job) -> Job:
        with self._lock:
            stored = self.jobs.setdefault((job.user_id, job.number), job.model_copy())
            return stored.model_copy()

    def get(self, user_id: int, number: int) -> Job | None:
        with self._lock:
            job = self.jobs.get((user_id, number))
            return job.model_copy() if job is not None else None

    def recent(self, user_id: int, limit: int = 10) -> list[Job]:
        with self._lock:
            mine = sorted((n, j) for (u, n), j in self.jobs.items() if u == user_id)
        return [j.model_copy() for _, j in reversed(mine)][: max(limit, 0)]

    def progress(self, user_id: int, number: int, tool_rounds: int, tokens: int, cost_nano_usd: int) -> None:
        with self._lock:
            job = self.jobs.get((user_id, number))
            if job is None or not job.running:
                return
            self.jobs[(user_id, number)] = job.model_copy(
                update={"tool_rounds": tool_rounds, "tokens": tokens, "cost_nano_usd": cost_nano_usd}
            )

    def finish(self, user_id: int, number: int, status: JobStatus, report: str, finished_at: str) -> Job:
        with self._lock:
            job = self.jobs.get((user_id, number))
            if job is None:
                raise KeyError(f"user {user_id} has no job {number}")
            if job.running:
                job = job.model_copy(update={"status": status, "report": report, "finished_at": finished_at})
                self.jobs[(user_id, number)] = job
            return job.model_copy()
