"""The MCP server of the built-in tools: the tool catalog (`stepwise.tools`) served with the official MCP SDK,
for one user.

`tools/list` is the registry's catalog, the one the model gets: the same names, descriptions and input
schemas, with MCP's annotations and, for the read tools, an output schema. A `tools/call` goes the way the
model's calls go (`stepwise.tools.calls`): the registry parses the arguments (an unknown tool or invalid
arguments are error results, in the same words the model gets), runs the tool once per call id (the tool-call
ledger), and the call is written to the audit log. A read tool's result carries its data as
`structuredContent`.

Who the calls act for is the caller's to say, never the client's: `context_for_call` gives each call its
`ToolContext` (user, chat, call id, time), no input model has a user argument, and every input model rejects
arguments it does not declare. Tools that need the user's approval are not run here: with `ask` (the /mcp
endpoint's `AskInTelegram`) the call is handed to the user's chat, which asks for the tap and runs it once
approved, and the client is told so at once; without it the client gets an error result.

The SDK's low-level `Server` rather than `MCPServer`, whose tools take their schemas from Python function
signatures: the catalog has its schemas already (pydantic models), and serving them as they are keeps one
definition per tool. Importing this module imports the SDK, about four times `import boto3` (`make bench`):
only code that speaks MCP imports it; RunTools runs the built-in tools through the registry directly.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import anyio.to_thread
from mcp import types
from mcp.server.lowlevel import Server

from stepwise.tools.calls import call_unattended

if TYPE_CHECKING:
    from collections.abc import Callable

    from mcp.server import ServerRequestContext

    from stepwise.audit.log import AuditLog
    from stepwise.tools.calls import AskApproval
    from stepwise.tools.registry import ToolContext, ToolRegistry

type ContextForCall = Callable[[], ToolContext]
"""Each call's context: the user and chat it acts for, a new call id, the time."""

SERVER_NAME = "stepwise"
INSTRUCTIONS = (
    "Stepwise's own tools: the user's tasks, reminders, long-term memories and time zone. Every call acts "
    "for the user this connection belongs to. A tool that changes data for good (destructiveHint) is not run "
    "at once: the user is asked to approve it in Telegram, the result says so, and it runs once they approve."
)


def build_mcp_server(
    tools: ToolRegistry, context_for_call: ContextForCall, audit: AuditLog, ask: AskApproval | None = None
) -> Server[dict[str, Any]]:
    """An MCP server of `tools` for the user `context_for_call` names; it gives each call its context (a new
    call id per call: the ledger runs a call id once). `ask` hands calls that need approval to the user."""
    listed = [types.Tool.model_validate(spec) for spec in tools.mcp_tools()]

    async def list_tools(
        ctx: ServerRequestContext[dict[str, Any]], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=list(listed))

    async def call_tool(
        ctx: ServerRequestContext[dict[str, Any]], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        arguments = params.arguments or {}

        def call() -> types.CallToolResult:  # the stores are synchronous: off the event loop
            result = call_unattended(tools, audit, context_for_call(), params.name, arguments, ask).result
            return types.CallToolResult(
                content=[types.TextContent(text=result.content)],
                structured_content=result.structured,
                is_error=result.is_error,
            )

        return await anyio.to_thread.run_sync(call)

    return Server(SERVER_NAME, instructions=INSTRUCTIONS, on_list_tools=list_tools, on_call_tool=call_tool)
