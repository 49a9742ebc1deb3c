"""An in-memory TaskRepository for unit tests."""

from __future__ import annotations

from stepwise.tasks.models import Task, TaskStatusFilter


class InMemoryTaskRepository:
    """Tasks in a dict keyed by (user_id, task_id)."""

    def __init__(self) -> None:
        self.tasks: dict[tuple[int, int], Task] = {}
        self._counters: dict[int, int] = {}

    def add(self, user_id: int, title: str, description: str, now: str) -> Task:
        self._counters[user_id] = self._counters.get(user_id, 0) + 1
        task = Task(
            user_id=user_id,
            task_id=self._counters[user_id],
            title=title,
            description=description,
            created_at=now,
            updated_at=now,
        )
        self.tasks[(user_id, task.task_id)] = task
        return task

    def list(self, user_id: int, status: TaskStatusFilter) -> list[Task]:
        return [t for (u, _), t in sorted(self.tasks.items()) if u == user_id and status in ("all", t.status)]

    def get(self, user_id: int, task_id: int) -> Task | None:
        return self.tasks.get((user_id, task_id))

    def update(
        self, user_id: int, task_id: int, *, title: str | None, description: str | None, now: str
    ) -> Task | None:
        task = self.tasks.get((user_id, task_id))
        if task is None:
            return None
        changes: dict[str, object] = {"updated_at": now}
        if title is not None:
            changes["title"] = title
        if description is not None:
            changes["description"] = description
        self.tasks[(user_id, task_id)] = task.model_copy(update=changes)
        return self.tasks[(user_id, task_id)]

    def complete(self, user_id: int, task_id: int, now: str) -> Task | None:
        task = self.tasks.get((user_id, task_id))
        if task is None:
            return None
        self.tasks[(user_id, task_id)] = task.model_copy(
            update={"status": "completed", "completed_at": now, "updated_at": now}
        )
        return self.tasks[(user_id, task_id)]

    def delete(self, user_id: int, task_id: int) -> Task | None:
        return self.tasks.pop((user_id, task_id), None)
