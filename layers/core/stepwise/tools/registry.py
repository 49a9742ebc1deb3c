"""The tool registry: each tool's name, description, input model, handler, whether it needs approval, and
what MCP says of it (its annotations and, for a read tool, the shape of its result).

The registry is generic: a tool's handler is already bound to the store it uses (see `catalog`), and the
`ToolContext` it gets says only who it acts for, when, and which call it runs. The system prompt's tools
section, the API's `tools` parameter and the MCP server's `tools/list` (`stepwise.mcp.server`) all come from
here. Tools with a side effect (`writes`) run at most once per tool call: the registry looks the call up in
the tool-call ledger first and returns the recorded result of a call that already made its effect.

Nothing here imports the MCP SDK: `mcp_spec` is plain JSON in MCP's wire names, so a function that only runs
built-in tools (RunTools) never pays for the SDK's import.
"""

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any, NamedTuple

from pydantic import BaseModel, ConfigDict, ValidationError

from stepwise.approvals.arguments import TooLongToShowError, argument_lines, tg_len
from stepwise.ledger.models import CallAlreadyRecorded, Once, ToolCallRecord
from stepwise.model.blocks import ToolParam, ToolResultBlock
from stepwise.prompt.system import ToolSummary

if TYPE_CHECKING:
    from stepwise.approvals.models import Requester
    from stepwise.ledger.store import ToolCallLedger
    from stepwise.telegram.conversation import Scope

logger = logging.getLogger(__name__)

MAX_RESULT_CHARS = 8000
TOO_LONG_TO_SHOW = (
    "Refused: this call needs the user's approval, and its arguments cannot all be shown in one approval "
    "request (only the single longest text may be shortened; recipients, ids and every other value are "
    "shown whole), and a call is never approved unseen. Nothing was done and nothing waits for approval; "
    "make fewer calls at once or shorter arguments"
)


class ToolError(Exception):
    """A failure the model should explain to the user ("there is no task 42")."""


class NotShownError(ToolError):
    """A call that needs approval whose arguments cannot all be shown: refused, never asked about in part."""


class EffectIncomplete(RuntimeError):
    """A tool's effect could not be made now (a store refused, throttled): the state that runs the call fails
    and the state machine retries it, which makes the effect (idempotent, under the recorded intent),
    instead of answering the model with an error while half of the effect is done."""


class ToolContext(NamedTuple):
    """Who a tool acts for, when, and which call it runs. The `scope` comes from the turn, never the model:
    whose tasks, reminders and memories the call reads and writes (`scope.owner`: the group's in a group, the
    user's in a private chat), and the conversation where a reminder or job set by it reports.

    `call_id` keys the call's record in the tool-call ledger (see `stepwise.ledger.tool_call_id`);
    `recorded` is the record an earlier attempt of this call left (for a tool with an `intent`, the intent
    in force while it runs). `requester` is who makes the call (the chat's model, a background job, an MCP
    client, a check-in), as an approval names it; None where nobody but the user could (a command).
    """

    scope: "Scope"
    turn_id: str
    call_id: str
    now: str
    recorded: ToolCallRecord | None = None
    requester: "Requester | None" = None

    @property
    def owner(self) -> int:
        """Whose tasks, reminders and memories the call reads and writes."""
        return self.scope.owner

    @property
    def user_id(self) -> int:
        """Who speaks: the person, in a group the member."""
        return self.scope.user_id

    def once[T](self, result: Callable[[T], str]) -> Once[T]:
        """Ask a store to make its effect once for this call, recording `result(value)` with it."""
        return Once(self.call_id, result)


class Intent(NamedTuple):
    """What a call will do, recorded before an effect that cannot join a DynamoDB transaction: the result
    text the model gets, and `ref`, the id of what the effect is about (read back by a retried call)."""

    result: str
    ref: str = ""


class ToolOutput[Data: BaseModel](NamedTuple):
    """What a read tool returns: the text the model reads, and the same result as data (an MCP client gets it
    as `structuredContent`, in the shape of the tool's `output_model`)."""

    text: str
    data: Data


class ToolResult(BaseModel):
    """What a tool call returns: `content` is the text the model reads; `structured` is a read tool's result
    as data (MCP's `structuredContent`), None for the tools with an effect, which answer text only."""

    model_config = ConfigDict(defer_build=True)

    content: str
    is_error: bool = False
    structured: dict[str, Any] | None = None

    def block(self, tool_use_id: str) -> ToolResultBlock:
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
class Tool[Args: BaseModel]:
    """One tool. `describe` says what an approval-needing call will do, showing every argument within the
    room it is given (UTF-16 code units; see `stepwise.approvals.arguments`); it may raise ToolError.

    A tool that `writes` makes its effect once per call in one of two ways: a store records it in the ledger
    in the same transaction (`context.once(...)`), or the tool declares an `intent`, which the registry
    records before `run` makes an idempotent effect; a retried call then runs again with the recorded intent
    in `context.recorded`, and the model gets the intent's result text.

    What MCP clients are told (the annotations are hints; approval is what the workflow enforces):
    `read_only` (changes nothing), `destructive` (may delete or overwrite the user's data; every tool that
    needs approval is), `idempotent` (the same call again changes nothing more). A read-only tool returns a
    `ToolOutput` whose data is an `output_model`; a tool with an effect answers text only, the text its
    ledger record keeps for a retried call.

    `needs_approval` makes every call wait for the user's tap; `approval_when` only the calls whose
    arguments it picks (`set_reminder` asks for a check-in, not for a plain reminder): see `asks_approval`.
    """

    name: str
    description: str
    input_model: type[Args]
    run: Callable[[ToolContext, Args], str | ToolOutput[Any]]
    needs_approval: bool = False
    describe: Callable[[ToolContext, Args, int], str] | None = None
    writes: bool = False
    intent: Callable[[ToolContext, Args], Intent] | None = None
    read_only: bool = False
    destructive: bool = False
    idempotent: bool = False
    output_model: type[BaseModel] | None = None
    # A tool of an outside MCP server (see stepwise.remote_tools): its arguments' JSON schema as the server
    # gave it (the input model then takes any object, and the server checks it), and an open world.
    schema: dict[str, Any] | None = None
    open_world: bool = False
    approval_when: Callable[[Args], bool] | None = None
    # False: never offered to a model or an MCP client; only a step the turn makes itself calls it (secretary
    # mode's send_reply, docs/secretary.md)
    offered: bool = True

    def __post_init__(self) -> None:
        if self.read_only and (self.writes or self.needs_approval or self.destructive or self.intent):
            raise ValueError(
                f"{self.name}: a read-only tool neither writes, nor destroys, nor needs approval"
            )
        if self.needs_approval and not self.destructive:
            raise ValueError(
                f"{self.name}: a tool that waits for approval changes data for good (destructive)"
            )
        if self.read_only != (self.output_model is not None):
            raise ValueError(f"{self.name}: read-only tools, and only they, declare an output_model")
        if self.approval_when is not None and (self.needs_approval or self.describe is None):
            raise ValueError(f"{self.name}: a tool that asks for some calls describes them, and not for all")

    def asks_approval(self, args: Args) -> bool:
        """Whether this call waits for the user's approval: every call of a tool that `needs_approval`, and
        the calls `approval_when` picks."""
        return self.needs_approval or (self.approval_when is not None and self.approval_when(args))

    @property
    def may_ask(self) -> bool:
        """Whether any call of this tool may wait for approval."""
        return self.needs_approval or self.approval_when is not None

    def input_schema(self) -> dict[str, Any]:
        """The JSON schema of the arguments: what the model and MCP clients are given (shared: not to be
        changed)."""
        return self.schema if self.schema is not None else _json_schema(self.input_model)

    def api_spec(self) -> ToolParam:
        """The entry of the Messages API's `tools` parameter."""
        return {"name": self.name, "description": self.description, "input_schema": self.input_schema()}

    def annotations(self) -> dict[str, bool]:
        """MCP's tool annotations. The world of the built-in tools is closed: each acts on the user's own data
        only; an outside server's tools are open."""
        return {
            "readOnlyHint": self.read_only,
            "destructiveHint": self.destructive,
            "idempotentHint": self.read_only or self.idempotent,
            "openWorldHint": self.open_world,
        }

    def mcp_spec(self) -> dict[str, Any]:
        """The entry of MCP's `tools/list`, in the protocol's JSON names (the same name, description and
        input schema as `api_spec`)."""
        spec: dict[str, Any] = {
            "name": self.name,
            "description": self.description,
            "inputSchema": self.input_schema(),
            "annotations": self.annotations(),
        }
        if self.output_model is not None:
            spec["outputSchema"] = _json_schema(self.output_model)
        return spec

    def result(self, returned: str | ToolOutput[Any]) -> ToolResult:
        """What the handler returned, as a result; a read tool's data must be its output model."""
        if self.output_model is None:
            if not isinstance(returned, str):
                raise TypeError(f"{self.name} answers text only")
            return ToolResult(content=returned)
        if not isinstance(returned, ToolOutput) or not isinstance(returned.data, self.output_model):
            raise TypeError(f"{self.name} answers a ToolOutput of {self.output_model.__name__}")
        return ToolResult(content=returned.text, structured=returned.data.model_dump(mode="json"))


@cache
def _json_schema(model: type[BaseModel]) -> dict[str, Any]:
    """A model's JSON schema without its title, made once per process: pydantic builds it anew on every call
    (about 3 ms for the whole catalog, on every model call otherwise)."""
    schema = model.model_json_schema()
    schema.pop("title", None)
    return schema


class AnyArguments(BaseModel):
    """The arguments of a tool whose schema is plain JSON (an outside server's): any object, kept as given."""

    model_config = ConfigDict(extra="allow", defer_build=True)


class ToolRegistry:
    """The tools available in a turn."""

    def __init__(self, tools: Sequence[Tool[Any]], ledger: "ToolCallLedger | None" = None) -> None:
        names = [tool.name for tool in tools]
        if len(set(names)) != len(names):
            raise ValueError(f"duplicate tool names in {names}")
        if ledger is None and any(tool.writes for tool in tools):
            raise ValueError("tools that write need the tool-call ledger")
        self._tools = {tool.name: tool for tool in tools}
        self._ledger = ledger

    def __len__(self) -> int:
        return len(self._tools)

    def get(self, name: str) -> Tool[Any] | None:
        return self._tools.get(name)

    def with_tools(self, extra: Sequence[Tool[Any]]) -> "ToolRegistry":
        """A registry of these tools and then `extra` (an outside server's), with the same ledger."""
        return ToolRegistry([*self._tools.values(), *extra], self._ledger)

    def without(self, names: frozenset[str]) -> "ToolRegistry":
        """A registry of these tools but `names`, with the same ledger."""
        return ToolRegistry([tool for tool in self._tools.values() if tool.name not in names], self._ledger)

    def read_only(self) -> "ToolRegistry":
        """The tools that change nothing and reach nothing outside (a secretary turn's, docs/secretary.md)."""
        tools = [tool for tool in self._tools.values() if tool.read_only and not tool.open_world]
        return ToolRegistry(tools, self._ledger)

    def api_tools(self) -> list[ToolParam]:
        return [tool.api_spec() for tool in self._tools.values() if tool.offered]

    def mcp_tools(self) -> list[dict[str, Any]]:
        """MCP's `tools/list`: the same tools, names, descriptions and input schemas as `api_tools`."""
        return [tool.mcp_spec() for tool in self._tools.values() if tool.offered]

    def summaries(self) -> list[ToolSummary]:
        return [
            ToolSummary(t.name, t.description, t.needs_approval) for t in self._tools.values() if t.offered
        ]

    def parse(self, name: str, arguments: Mapping[str, Any]) -> tuple[Tool[Any], BaseModel]:
        """The tool and its validated arguments; ToolError for an unknown tool or invalid arguments."""
        tool = self._tools.get(name)
        if tool is None:
            offered = ", ".join(name for name, tool in self._tools.items() if tool.offered)
            raise ToolError(f"Unknown tool {name!r}. Available tools: {offered}.")
        try:
            return tool, tool.input_model.model_validate(arguments)
        except ValidationError as error:
            problems = "; ".join(
                f"{'.'.join(map(str, e['loc'])) or 'input'}: {e['msg']}" for e in error.errors()
            )
            raise ToolError(f"Invalid arguments for {name}: {problems}") from error

    def run(self, context: ToolContext, tool: Tool[Any], args: BaseModel) -> ToolResult:
        """Run a tool; its failures become is_error results. A call that already made its effect returns
        the recorded result; failing to read the ledger raises (the state retries: the call may have run)."""
        if tool.writes and self._ledger is not None:
            recorded = self._ledger.get(context.call_id)
            if recorded is not None and recorded.kind == "done":
                return ToolResult(content=recorded.result, is_error=recorded.is_error)
            context = context._replace(recorded=recorded)
        try:
            if tool.intent is not None:
                return ToolResult(content=self._run_with_intent(context, tool, args))
            return tool.result(tool.run(context, args))
        except CallAlreadyRecorded as already:
            return ToolResult(content=already.record.result)
        except EffectIncomplete:
            raise
        except ToolError as error:
            return ToolResult(content=str(error), is_error=True)
        except Exception:
            logger.exception("tool failed", extra={"tool": tool.name})
            return ToolResult(
                content=f"The {tool.name} tool failed unexpectedly; nothing more is known.", is_error=True
            )

    def _run_with_intent(self, context: ToolContext, tool: Tool[Any], args: BaseModel) -> str:
        """Record the call's intent (unless an earlier attempt did), make the effect, answer the intent."""
        assert tool.intent is not None and self._ledger is not None  # checked by run() and __init__
        if context.recorded is None:
            planned = tool.intent(context, args)
            context = context._replace(
                recorded=self._ledger.record_intent(context.call_id, planned.result, planned.ref)
            )
        assert context.recorded is not None
        tool.run(context, args)
        return context.recorded.result

    def describe(self, context: ToolContext, tool: Tool[Any], args: BaseModel, room: int) -> str:
        """What an approval-needing call will do, in words the user can approve, every argument shown within
        `room` (see `stepwise.approvals.arguments`). Raises ToolError when there is nothing to approve (no
        such task), NotShownError when the arguments cannot all be shown."""
        try:
            if tool.describe is not None:
                return tool.describe(context, args, room)
            head = f"Call {tool.name} with:\n"
            return head + argument_lines(args.model_dump(mode="json"), room - tg_len(head))
        except TooLongToShowError as error:
            raise NotShownError(f"{TOO_LONG_TO_SHOW} ({error}).") from None
