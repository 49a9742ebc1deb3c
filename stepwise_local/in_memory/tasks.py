"""An in-memory TaskRepository for unit tests, with the same once-per-call semantics as DynamoDB."""

from __future__ import annotations

from stepwise.ledger.models import CallAlreadyRecorded, Once
from stepwise.tasks.models import Task, TaskStatusFilter, task_changes
from stepwise_local.in_memory.ledger import InMemoryToolCallLedger


class InMemoryTaskRepository:
    """Tasks in a dict keyed by (user_id, task_id); `once` records go to `ledger`."""

    def __init__(self, ledger: InMemoryToolCallLedger | None = None) -> None:
        self.tasks: dict[tuple[int, int], Task] = {}
        self.ledger = ledger if ledger is not None else InMemoryToolCallLedger()
        self._counters: dict[int, int] = {}

    def _check(self, once: Once[Task] | None) -> None:
        """Refuse a call that already made its effect, as the ledger's condition does in the transaction."""
        if once is not None:
            recorded = self.ledger.get(once.call_id)
            if recorded is not None:
                raise CallAlreadyRecorded(recorded)

    def _commit(self, task: Task, once: Once[Task] | None) -> Task:
        if once is not None:
            self.ledger.add(once.record(task))
        return task

    def add(
        self,
        user_id: int,
        title: str,
        description: str,
        now: str,
        once: Once[Task] | None = None,
        due: str | None = None,
    ) -> Task:
        self._check(once)
        self._counters[user_id] = self._counters.get(user_id, 0) + 1
        task = Task(
            user_id=user_id,
            task_id=self._counters[user_id],
            title=title,
            description=description,
            due=due or None,
            created_at=now,
            updated_at=now,
        )
        self.tasks[(user_id, task.task_id)] = task
        return self._commit(task, once)

    def list(self, user_id: int, status: TaskStatusFilter) -> list[Task]:
        return [t for (u, _), t in sorted(self.tasks.items()) if u == user_id and status in ("all", t.status)]

    def get(self, user_id: int, task_id: int) -> Task | None:
        return self.tasks.get((user_id, task_id))

    def _change(
        self, user_id: int, task_id: int, changes: dict[str, object], once: Once[Task] | None
    ) -> Task | None:
        self._check(once)
        task = self.tasks.get((user_id, task_id))
        if task is None:
            return None
        self.tasks[(user_id, task_id)] = task.model_copy(update=changes)
        return self._commit(self.tasks[(user_id, task_id)], once)

    def update(
        self,
        user_id: int,
        task_id: int,
        *,
        title: str | None,
        description: str | None,
        now: str,
        once: Once[Task] | None = None,
        due: str | None = None,
    ) -> Task | None:
        changes = task_changes(now, title, description, due)
        return self._change(user_id, task_id, changes, once)

    def complete(self, user_id: int, task_id: int, now: str, once: Once[Task] | None = None) -> Task | None:
        return self._change(
            user_id, task_id, {"status": "completed", "completed_at": now, "updated_at": now}, once
        )

    def delete(self, user_id: int, task_id: int, once: Once[Task] | None = None) -> Task | None:
        self._check(once)
        task = self.tasks.pop((user_id, task_id), None)
        return None if task is None else self._commit(task, once)
