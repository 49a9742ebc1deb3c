"""The task tools: add, list, get, update, complete and delete tasks on the user's own list.

Each handler takes the task store first; `task_tools(tasks)` binds them to it for the catalog. The read tools
(list_tasks, get_task) also return their result as data, a `TaskList` or a `TaskView`.

The tools that change tasks pass `context.once(...)` to the store, which records the call's result text in
the tool-call ledger in the same transaction as the change: a retried call changes nothing and returns it.
"""

from __future__ import annotations

from datetime import datetime
from functools import partial
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StringConstraints, model_validator
from pydantic_core import PydanticCustomError

from stepwise.approvals.arguments import worded
from stepwise.reminders.timing import TimingError, describe_instant, zone
from stepwise.tasks.models import Task, TaskStatus, TaskStatusFilter, blank
from stepwise.tools.registry import Tool, ToolContext, ToolError, ToolOutput

if TYPE_CHECKING:
    from collections.abc import Callable

    from stepwise.tasks.repository import TaskRepository

    type ZoneOf = Callable[[int], str]
    """The time zone a user's moments are written in (their /timezone, else the deployment's default)."""

MAX_TITLE = 200
MAX_DESCRIPTION = 2000


def _visible(title: str) -> str:
    if blank(title):
        raise PydanticCustomError(
            "blank_title",
            "the title is blank once invisible characters (zero-width spaces, joiners) are removed: "
            "give it some visible text",
        )
    return title


# Kept as given when it has something to see (a zero-width joiner inside an emoji is part of it).
Title = Annotated[
    str,
    StringConstraints(strip_whitespace=True, min_length=1, max_length=MAX_TITLE),
    AfterValidator(_visible),
]
Description = Annotated[str, StringConstraints(strip_whitespace=True, max_length=MAX_DESCRIPTION)]
MAX_TASK_ID = 2**31 - 1  # far more tasks than anyone keeps; well inside DynamoDB's 38 digits


def _task_number(value: int) -> int:
    if not 1 <= value <= MAX_TASK_ID:
        raise PydanticCustomError(
            "task_number",
            "there is no task #{number}: task numbers run from 1 to {maximum}",
            {"number": value, "maximum": MAX_TASK_ID},
        )
    return value


# Strict: a bool or a string is not a task number. The schema tells the model the range; the validator
# rejects what is outside it with a message the model (or the offline rules model) can pass on.
TaskId = Annotated[
    int,
    Field(
        strict=True,
        description="The task's number, as shown in lists (#3 is 3).",
        json_schema_extra={"minimum": 1, "maximum": MAX_TASK_ID},
    ),
    AfterValidator(_task_number),
]


def _real_date(value: str) -> str:
    try:
        datetime.fromisoformat(value)
    except ValueError:
        raise PydanticCustomError("due", "{value} is not a date", {"value": value}) from None
    return value


Due = Annotated[
    str,
    StringConstraints(strip_whitespace=True, pattern=r"^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2})?$"),
    AfterValidator(_real_date),
    Field(description="When it is due, in the user's time zone: YYYY-MM-DD or YYYY-MM-DDTHH:MM."),
]


class _Input(BaseModel):
    model_config = ConfigDict(defer_build=True, extra="forbid")


class AddTaskInput(_Input):
    title: Title = Field(description=f"Short title, at most {MAX_TITLE} characters.")
    description: Description = Field(default="", description="Optional details.")
    due: Due | None = None


class ListTasksInput(_Input):
    status: TaskStatusFilter = Field(default="all", description="Which tasks: all, pending or completed.")


class TaskIdInput(_Input):
    task_id: TaskId


class UpdateTaskInput(_Input):
    task_id: TaskId
    title: Title | None = Field(default=None, description="The new title.")
    description: Description | None = Field(default=None, description="The new description.")
    due: Due | Literal[""] | None = Field(default=None, description='The new due time; "" removes it.')

    @model_validator(mode="after")
    def _something_changes(self) -> UpdateTaskInput:
        if self.title is None and self.description is None and self.due is None:
            raise ValueError("give a new title, description or due time")
        return self


class TaskView(BaseModel):
    """One of the user's tasks; `due` is a local date or date-time in the user's time zone."""

    model_config = ConfigDict(defer_build=True)

    task_id: int
    title: str
    description: str
    status: TaskStatus
    due: str | None
    created_at: str
    completed_at: str | None

    @classmethod
    def of(cls, task: Task) -> TaskView:
        return cls.model_validate(task.model_dump(include=set(cls.model_fields)))


class TaskList(BaseModel):
    """The user's tasks, in list order."""

    model_config = ConfigDict(defer_build=True)

    tasks: list[TaskView]


def _existing(tasks: TaskRepository, context: ToolContext, task_id: int) -> Task:
    task = tasks.get(context.owner, task_id)
    if task is None:
        raise ToolError(f"There is no task #{task_id} on the user's list.")
    return task


def _added(task: Task) -> str:
    due = f" (due {task.due.replace('T', ' ')})" if task.due else ""
    return f"Added task #{task.task_id}: {task.title}{due}"


def _updated(task: Task) -> str:
    return f"Updated task #{task.task_id}: {task.title}"


def _completed(task: Task) -> str:
    return f"Completed task #{task.task_id}: {task.title}"


def _deleted(task: Task) -> str:
    return f"Deleted task #{task.task_id}: {task.title}"


def add_task(tasks: TaskRepository, context: ToolContext, args: AddTaskInput) -> str:
    task = tasks.add(
        context.owner, args.title, args.description, context.now, once=context.once(_added), due=args.due
    )
    return _added(task)


def list_tasks(tasks: TaskRepository, context: ToolContext, args: ListTasksInput) -> ToolOutput[TaskList]:
    found = tasks.list(context.owner, args.status)
    kind = "" if args.status == "all" else f"{args.status} "
    data = TaskList(tasks=[TaskView.of(task) for task in found])
    if not found:
        return ToolOutput(f"No {kind}tasks.", data)
    text = f"{len(found)} {kind}task{'s' if len(found) != 1 else ''}:\n" + "\n".join(t.line() for t in found)
    return ToolOutput(text, data)


def get_task(
    tasks: TaskRepository, zone_of: ZoneOf | None, context: ToolContext, args: TaskIdInput
) -> ToolOutput[TaskView]:
    """One task; its created and completed moments as the chat writes moments, in the user's zone ("Mon 23
    Nov 2026 at 17:00 (Europe/Lisbon)"; UTC where no zone is kept)."""
    task = _existing(tasks, context, args.task_id)
    try:
        tz = zone(zone_of(context.user_id) if zone_of is not None else "UTC")
    except TimingError:
        tz = zone("UTC")
    lines = [task.line(), f"Status: {task.status}", f"Created: {describe_instant(task.created_at, tz)}"]
    if task.description:
        lines.insert(1, f"Description: {task.description}")
    if task.due:
        lines.append(f"Due: {task.due.replace('T', ' ')} (the user's time zone)")
    if task.completed_at:
        lines.append(f"Completed: {describe_instant(task.completed_at, tz)}")
    return ToolOutput("\n".join(lines), TaskView.of(task))


def update_task(tasks: TaskRepository, context: ToolContext, args: UpdateTaskInput) -> str:
    task = tasks.update(
        context.owner,
        args.task_id,
        title=args.title,
        description=args.description,
        now=context.now,
        once=context.once(_updated),
        due=args.due,
    )
    if task is None:
        raise ToolError(f"There is no task #{args.task_id} on the user's list.")
    return _updated(task)


def describe_update(tasks: TaskRepository, context: ToolContext, args: UpdateTaskInput, room: int) -> str:
    task = _existing(tasks, context, args.task_id)
    changes, values = [], [task.title]
    if args.title is not None:
        changes.append("rename it to “{}”")
        values.append(args.title)
    if args.description is not None:
        changes.append("set its description to “{}”" if args.description else "clear its description")
        values.extend([args.description] if args.description else [])
    if args.due is not None:
        changes.append("remove its due time" if not args.due else f"make it due {args.due.replace('T', ' ')}")
    return worded(f"Change task #{task.task_id} “{{}}”: {' and '.join(changes)}.", values, room)


def complete_task(tasks: TaskRepository, context: ToolContext, args: TaskIdInput) -> str:
    task = _existing(tasks, context, args.task_id)
    if task.status == "completed":
        return f"Task #{task.task_id} was already completed: {task.title}"
    done = tasks.complete(context.owner, args.task_id, context.now, once=context.once(_completed))
    if done is None:
        raise ToolError(f"There is no task #{args.task_id} on the user's list.")
    return _completed(done)


def delete_task(tasks: TaskRepository, context: ToolContext, args: TaskIdInput) -> str:
    task = tasks.delete(context.owner, args.task_id, once=context.once(_deleted))
    if task is None:
        raise ToolError(f"There is no task #{args.task_id} on the user's list.")
    return _deleted(task)


def describe_delete(tasks: TaskRepository, context: ToolContext, args: TaskIdInput, room: int) -> str:
    task = _existing(tasks, context, args.task_id)
    return worded(f"Delete task #{task.task_id} “{{}}”.", [task.title], room)


def task_tools(tasks: TaskRepository, zone_of: ZoneOf | None = None) -> list[Tool[Any]]:
    """The task tools, bound to the user's task store and, for the moments get_task writes, to where the
    user's time zone is kept (None: UTC)."""
    return [
        Tool(
            "add_task", "Add a task to the user's list.", AddTaskInput, partial(add_task, tasks), writes=True
        ),
        Tool(
            "list_tasks",
            "List the user's tasks with their numbers and status.",
            ListTasksInput,
            partial(list_tasks, tasks),
            read_only=True,
            output_model=TaskList,
        ),
        Tool(
            "get_task",
            "Show one task with its details.",
            TaskIdInput,
            partial(get_task, tasks, zone_of),
            read_only=True,
            output_model=TaskView,
        ),
        Tool(
            "update_task",
            "Change a task's title and/or description.",
            UpdateTaskInput,
            partial(update_task, tasks),
            needs_approval=True,
            describe=partial(describe_update, tasks),
            writes=True,
            destructive=True,  # the old title or description is gone
            idempotent=True,
        ),
        Tool(
            "complete_task",
            "Mark a task as done.",
            TaskIdInput,
            partial(complete_task, tasks),
            writes=True,
            idempotent=True,  # a completed task is answered "was already completed"
        ),
        Tool(
            "delete_task",
            "Delete a task for good.",
            TaskIdInput,
            partial(delete_task, tasks),
            needs_approval=True,
            describe=partial(describe_delete, tasks),
            writes=True,
            destructive=True,
            idempotent=True,
        ),
    ]
