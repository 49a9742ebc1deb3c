"""The port for task storage. Every method is scoped to one user: ids never cross users.

Methods that change tasks take an optional `once`: the change is then made at most once for that tool call
and recorded in the tool-call ledger together with the change; a call that already made it raises
CallAlreadyRecorded (carrying the result the first run returned) and changes nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from stepwise.ledger.models import Once
    from stepwise.tasks.models import Task, TaskStatusFilter


class TaskRepository(Protocol):
    """Where tasks live. Implementations: DynamoDB, and in memory for tests."""

    def add(
        self,
        user_id: int,
        title: str,
        description: str,
        now: str,
        once: Once[Task] | None = None,
        due: str | None = None,
    ) -> Task:
        """Create a task with the user's next id (ids are gapless and never reused)."""
        ...

    def list(self, user_id: int, status: TaskStatusFilter) -> list[Task]:
        """The user's tasks with that status (or all), by id."""
        ...

    def get(self, user_id: int, task_id: int) -> Task | None:
        """One of the user's tasks, or None."""
        ...

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
        """Change title, description and/or due time ("" clears it); None when the user has no such task."""
        ...

    def complete(self, user_id: int, task_id: int, now: str, once: Once[Task] | None = None) -> Task | None:
        """Mark completed; None when the user has no such task."""
        ...

    def delete(self, user_id: int, task_id: int, once: Once[Task] | None = None) -> Task | None:
        """Delete and return the task; None when the user has no such task."""
        ...
