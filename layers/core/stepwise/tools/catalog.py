"""Every tool Stepwise offers, bound to its store: a new tool is one module, one line here and its store's
wiring in the composition root (`stepwise.runtime`)."""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING, Any

from stepwise.tools.job_tools import job_tools
from stepwise.tools.memory_tools import memory_tools
from stepwise.tools.registry import Tool, ToolRegistry
from stepwise.tools.reminder_tools import reminder_tools, user_zone_name
from stepwise.tools.skill_tools import skill_tools
from stepwise.tools.task_tools import task_tools

if TYPE_CHECKING:
    from stepwise.ledger.store import ToolCallLedger
    from stepwise.memory.service import MemoryService
    from stepwise.skills.catalog import SkillCatalog
    from stepwise.tasks.repository import TaskRepository
    from stepwise.tools.job_tools import JobSetup
    from stepwise.tools.reminder_tools import ReminderSetup


def build_registry(
    *,
    tasks: TaskRepository,
    ledger: ToolCallLedger,
    memory: MemoryService | None = None,
    reminders: ReminderSetup | None = None,
    skills: SkillCatalog | None = None,
    jobs: JobSetup | None = None,
) -> ToolRegistry:
    """The registry of a turn (the prompt and the API's tools parameter come from it). Memory and reminder
    tools are offered only where long-term memory and the reminder schedules are deployed; use_skill only
    where there are skills; spawn_job only where the jobs' table is."""
    zone_of = None if reminders is None else partial(user_zone_name, reminders)
    tools: list[Tool[Any]] = [*task_tools(tasks, zone_of)]
    if memory is not None:
        tools += memory_tools(memory)
    if reminders is not None:
        tools += reminder_tools(reminders, tasks)
    if skills is not None:
        tools += skill_tools(skills)
    if jobs is not None:
        tools += job_tools(jobs)
    return ToolRegistry(tools, ledger)
