"""Every tool Stepwise offers, in one registry."""

from __future__ import annotations

from stepwise.tools.memory_tools import MEMORY_TOOLS
from stepwise.tools.registry import ToolRegistry
from stepwise.tools.task_tools import TASK_TOOLS


def build_registry() -> ToolRegistry:
    """The registry used by the functions (the prompt and the API's tools parameter come from it)."""
    return ToolRegistry([*TASK_TOOLS, *MEMORY_TOOLS])
