"""A task on a user's list."""

import unicodedata
from typing import Literal

from pydantic import BaseModel, ConfigDict

TaskStatus = Literal["pending", "completed"]
TaskStatusFilter = Literal["all", "pending", "completed"]


class Task(BaseModel):
    """One task; `task_id` is short and unique per user (1, 2, 3...)."""

    model_config = ConfigDict(defer_build=True)

    user_id: int
    task_id: int
    title: str
    description: str = ""
    status: TaskStatus = "pending"
    created_at: str
    updated_at: str
    completed_at: str | None = None
    due: str | None = None  # a local date or date-time in the user's zone: 2026-11-24 or 2026-11-24T17:00

    def line(self) -> str:
        """One line for lists: `#3 [ ] buy milk (due 2026-11-24 17:00)`."""
        mark = "x" if self.status == "completed" else " "
        due = f" (due {self.due.replace('T', ' ')})" if self.due else ""
        return f"#{self.task_id} [{mark}] {self.title}{due}"


def blank(text: str) -> bool:
    """Whether `text` shows nothing: only whitespace and invisible format characters (Unicode category Cf,
    such as U+200B zero-width space, U+200D zero-width joiner, U+2060 word joiner, U+FEFF)."""
    return all(char.isspace() or unicodedata.category(char) == "Cf" for char in text)


def task_changes(now: str, title: str | None, description: str | None, due: str | None) -> dict[str, object]:
    """The fields an update sets: those given (a `due` of "" removes the due time), and `updated_at`."""
    changes: dict[str, object] = {"updated_at": now}
    if title is not None:
        changes["title"] = title
    if description is not None:
        changes["description"] = description
    if due is not None:
        changes["due"] = due or None
    return changes
