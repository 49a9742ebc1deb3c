"""The tool registry: each tool's name, description, input model, handler and whether it needs approval.

The system prompt's tools section and the API's `tools` parameter both come from here.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from aws_lambda_powertools import Logger
from pydantic import BaseModel, ValidationError

from stepwise.memory.service import MemoryService
from stepwise.prompt.system import ToolSummary
from stepwise.tasks.repository import TaskRepository

logger = Logger(child=True)

Args = TypeVar("Args", bound=BaseModel)
MAX_RESULT_CHARS = 8000


class ToolError(Exception):
    """A failure the model should explain to the user ("there is no task 42")."""


@dataclass(frozen=True)
class ToolContext:
    """Who a tool acts for. The identity comes from the turn, never from the model's arguments."""

    user_id: int
    chat_id: int
    turn_id: str
    now: str
    tasks: TaskRepository
    memory: MemoryService | None = None

    def memories(self) -> MemoryService:
        """The memory service; a ToolError when long-term memory is not configured."""
        if self.memory is None:
            raise ToolError("Long-term memory is not available in this deployment.")
        return self.memory


class ToolResult(BaseModel):
    """What a tool call returns to the model."""

    content: str
    is_error: bool = False

    def block(self, tool_use_id: str) -> dict[str, Any]:
        """The tool_result content block answering `tool_use_id`."""
        content = (
            self.content if len(self.content) <= MAX_RESULT_CHARS else self.content[:MAX_RESULT_CHARS] + "…"
        )
        return {
            "type": "tool_result",
            "tool_use_id": tool_use_id,
            "content": content or "(empty)",
            "is_error": self.is_error,
        }


@dataclass(frozen=True)
class Tool(Generic[Args]):
    """One tool. `describe` says what an approval-needing call will do (it may raise ToolError)."""

    name: str
    description: str
    input_model: type[Args]
    run: Callable[[ToolContext, Args], str]
    needs_approval: bool = False
    describe: Callable[[ToolContext, Args], str] | None = None

    def api_spec(self) -> dict[str, Any]:
        """The entry of the Messages API's `tools` parameter."""
        schema = self.input_model.model_json_schema()
        schema.pop("title", None)
        return {"name": self.name, "description": self.description, "input_schema": schema}


class ToolRegistry:
    """The tools available in a turn."""

    def __init__(self, tools: Sequence[Tool[Any]]) -> None:
        names = [tool.name for tool in tools]
        if len(set(names)) != len(names):
            raise ValueError(f"duplicate tool names in {names}")
        self._tools = {tool.name: tool for tool in tools}

    def __len__(self) -> int:
        return len(self._tools)

    def get(self, name: str) -> Tool[Any] | None:
        return self._tools.get(name)

    def api_tools(self) -> list[dict[str, Any]]:
        return [tool.api_spec() for tool in self._tools.values()]

    def summaries(self) -> list[ToolSummary]:
        return [ToolSummary(t.name, t.description, t.needs_approval) for t in self._tools.values()]

    def parse(self, name: str, raw_input: Any) -> tuple[Tool[Any], BaseModel]:
        """The tool and its validated arguments; ToolError for an unknown tool or invalid arguments."""
        tool = self._tools.get(name)
        if tool is None:
            raise ToolError(f"Unknown tool {name!r}. Available tools: {', '.join(self._tools)}.")
        try:
            return tool, tool.input_model.model_validate(raw_input if isinstance(raw_input, dict) else {})
        except ValidationError as error:
            problems = "; ".join(
                f"{'.'.join(map(str, e['loc'])) or 'input'}: {e['msg']}" for e in error.errors()
            )
            raise ToolError(f"Invalid arguments for {name}: {problems}") from error

    def run(self, context: ToolContext, tool: Tool[Any], args: BaseModel) -> ToolResult:
        """Run a tool; its failures become is_error results, never exceptions."""
        try:
            return ToolResult(content=tool.run(context, args))
        except ToolError as error:
            return ToolResult(content=str(error), is_error=True)
        except Exception:
            logger.exception("tool failed", extra={"tool": tool.name})
            return ToolResult(
                content=f"The {tool.name} tool failed unexpectedly; nothing more is known.", is_error=True
            )

    def describe(self, context: ToolContext, tool: Tool[Any], args: BaseModel) -> str:
        """What an approval-needing call will do, in words the user can approve."""
        if tool.describe is None:
            return f"{tool.name}({args.model_dump_json()})"
        return tool.describe(context, args)
