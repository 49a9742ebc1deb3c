"""The port for task storage. Every method is scoped to one user: ids never cross users."""

from __future__ import annotations

from typing import Protocol

from stepwise.tasks.models import Task, TaskStatusFilter


class TaskRepository(Protocol):
    """Where tasks live. Implementations: DynamoDB, and in memory for tests."""

    def add(self, user_id: int, title: str, description: str, now: str) -> Task:
        """Create a task with the user's next id."""
        ...

    def list(self, user_id: int, status: TaskStatusFilter) -> list[Task]:
        """The user's tasks with that status (or all), by id."""
        ...

    def get(self, user_id: int, task_id: int) -> Task | None:
        """One of the user's tasks, or None."""
        ...

    def update(
        self, user_id: int, task_id: int, *, title: str | None, description: str | None, now: str
    ) -> Task | None:
        """Change title and/or description; None when the user has no such task."""
        ...

    def complete(self, user_id: int, task_id: int, now: str) -> Task | None:
        """Mark completed; None when the user has no such task."""
        ...

    def delete(self, user_id: int, task_id: int) -> Task | None:
        """Delete and return the task; None when the user has no such task."""
        ...
