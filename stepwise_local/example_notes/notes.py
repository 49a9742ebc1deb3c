"""The example notes server's MCP tools: a tiny notes service, one list of notes per signed-in person.

`add_note(text)` (a write) and `list_notes()` (a read) act for the person the call's access token was issued
to (the name given on the sign-in page), never for anyone the arguments name: each person's token reaches
their own notes only. Served with the SDK's low-level `Server` (the tools' schemas written out here).
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any, NamedTuple

from mcp import types
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.lowlevel import Server

if TYPE_CHECKING:
    from mcp.server import ServerRequestContext

SERVER_NAME = "example-notes"
LONGEST_NOTE = 1000
TOOLS = [
    types.Tool(
        name="add_note",
        description="Add a note to your notes on the example notes server.",
        input_schema={
            "type": "object",
            "properties": {"text": {"type": "string", "description": "What to note down."}},
            "required": ["text"],
            "additionalProperties": False,
        },
        annotations=types.ToolAnnotations(
            read_only_hint=False, destructive_hint=False, idempotent_hint=False
        ),
    ),
    types.Tool(
        name="list_notes",
        description="List your notes on the example notes server, oldest first.",
        input_schema={"type": "object", "properties": {}, "additionalProperties": False},
        annotations=types.ToolAnnotations(read_only_hint=True),
    ),
]


class ToolCall(NamedTuple):
    """One tools/call the server answered: who it acted for, the tool, its arguments."""

    person: str
    tool: str
    arguments: dict[str, Any]


class Notes:
    """Each person's notes, and the calls made (thread-safe: the server's loop writes, a test reads)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._notes: dict[str, list[str]] = {}
        self._calls: list[ToolCall] = []

    def add(self, person: str, text: str) -> list[str]:
        with self._lock:
            self._notes.setdefault(person, []).append(text)
            return list(self._notes[person])

    def of(self, person: str) -> list[str]:
        with self._lock:
            return list(self._notes.get(person, []))

    def record(self, call: ToolCall) -> None:
        with self._lock:
            self._calls.append(call)

    @property
    def calls(self) -> list[ToolCall]:
        with self._lock:
            return list(self._calls)


def notes_mcp_server(notes: Notes) -> Server[dict[str, Any]]:
    """The MCP server of `notes`' tools; the HTTP app in front of it makes sure every request has a token."""

    async def list_tools(
        ctx: ServerRequestContext[dict[str, Any]], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=list(TOOLS))

    async def call_tool(
        ctx: ServerRequestContext[dict[str, Any]], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        person = _person(ctx)
        arguments = dict(params.arguments or {})
        if person is None:
            return _error("No signed-in person: call with an access token from the example notes server.")
        notes.record(ToolCall(person, params.name, arguments))
        if params.name == "add_note":
            text = arguments.get("text")
            if not isinstance(text, str) or not text.strip() or set(arguments) != {"text"}:
                return _error("add_note takes one argument, text: a non-empty string.")
            if len(text) > LONGEST_NOTE:
                return _error(f"A note is at most {LONGEST_NOTE} characters.")
            kept = notes.add(person, text.strip())
            return _notes_result(f"Noted for {person}: {text.strip()}", kept)
        if params.name == "list_notes":
            if arguments:
                return _error("list_notes takes no arguments.")
            kept = notes.of(person)
            listed = "\n".join(f"{n}. {note}" for n, note in enumerate(kept, 1)) or "(no notes yet)"
            return _notes_result(f"{person}'s notes:\n{listed}", kept)
        return _error(f"Unknown tool: {params.name}")

    return Server(
        SERVER_NAME,
        instructions="The example notes server: your own notes, for the person you signed in as.",
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


def _person(ctx: ServerRequestContext[dict[str, Any]]) -> str | None:
    """Whom this request's access token was issued to (the SDK's bearer middleware put it in the scope)."""
    user = getattr(ctx.request, "scope", {}).get("user")
    return user.access_token.subject if isinstance(user, AuthenticatedUser) else None


def _notes_result(text: str, kept: list[str]) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(text=text)], structured_content={"notes": kept})


def _error(text: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(text=text)], is_error=True)
