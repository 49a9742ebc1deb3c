"""Per-user task lists with short integer ids."""

from stepwise.tasks.models import Task, TaskStatus, TaskStatusFilter
from stepwise.tasks.repository import TaskRepository

__all__ = ["Task", "TaskRepository", "TaskStatus", "TaskStatusFilter"]
