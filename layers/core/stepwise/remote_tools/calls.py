"""One call of an outside server's tool: approval policy, circuit breaker, ledger, result.

The registry looks the call up in the tool-call ledger first (`writes`): a call that ran returns its recorded
result. Otherwise an intent is recorded before the request goes out, and the result after it comes back. A
retry that finds the intent alone (RunTools died in between) cannot know whether the server acted: a tool the
server marks read-only is asked again; any other is not sent again, and the model is told the outcome is
unknown.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from stepwise.approvals.arguments import argument_lines, tg_len
from stepwise.remote_tools.client import Connection, RemoteCallError
from stepwise.remote_tools.results import CALL_FAILED, framed, render
from stepwise.tools.registry import ToolError

if TYPE_CHECKING:
    from collections.abc import Callable

    from pydantic import BaseModel

    from stepwise.ledger.store import ToolCallLedger
    from stepwise.remote_tools.client import RemoteServers
    from stepwise.remote_tools.config import ServerEntry
    from stepwise.remote_tools.personal import AccountTokens
    from stepwise.remote_tools.state import RemoteToolCache, ServerRecord
    from stepwise.tools.registry import ToolContext

logger = logging.getLogger(__name__)

INTENT = "Sent to the outside server; no answer was recorded."
UNKNOWN_OUTCOME = (
    "The outcome of this call is unknown: an earlier attempt sent it to the outside MCP server “{server}” "
    "and was interrupted before the answer was recorded. It was not sent again, so that it cannot act "
    "twice. Tell the user, and check the result another way before calling it again."
)


@dataclass(frozen=True)
class RemoteLimits:
    """The settings of outside tools (see docs/configuration.md)."""

    refresh_seconds: int = 3600
    timeout_seconds: float = 12.0
    max_result_chars: int = 8000
    breaker_failures: int = 3
    breaker_seconds: int = 300


@dataclass(frozen=True)
class RemoteTool:
    """One tool of one server, as the catalog offers it. `first_seen` is its annotations as first seen (or as
    the owner last accepted them; stepwise.remote_tools.labels), None for a tool that was not there then: a
    label is trusted only where both say so."""

    entry: ServerEntry
    tool: str
    annotations: dict[str, Any]
    listing: tuple[dict[str, Any], ...] = ()
    first_seen: dict[str, Any] | None = None  # None: new (the safe default: it asks)
    user_id: int | None = None  # an OAuth server's tool: whose account it was listed with and calls with

    @property
    def record(self) -> str:
        """The key of the record its list and breaker are kept in: the server's, or the person's own."""
        return record_key(self.entry, self.user_id)

    def _both(self, hint: str, value: bool) -> bool:
        first = self.first_seen
        return self.annotations.get(hint) is value and first is not None and first.get(hint) is value

    @property
    def new(self) -> bool:
        """A tool the server did not list when its labels were pinned, not accepted by the owner since."""
        return self.first_seen is None

    @property
    def read_only(self) -> bool:
        """Labelled read-only now and when first seen: a tool that turned "read-only" later is not."""
        return self._both("readOnlyHint", True)

    @property
    def destructive(self) -> bool:
        """MCP's default: a tool that is not read-only may destroy, unless it says (and said) it does not."""
        return not self.read_only and not self._both("destructiveHint", False)

    @property
    def idempotent(self) -> bool:
        return self._both("idempotentHint", True)

    @property
    def needs_approval(self) -> bool:
        """The server's policy: `writes` asks for every tool not (trusted as) read-only, `always` for every
        tool, `never` for none; and every policy asks for a new tool until the owner accepts it."""
        policy = self.entry.approval
        return policy == "always" or (policy == "writes" and not self.read_only) or self.new


def record_key(entry: ServerEntry, user_id: int | None) -> str:
    """The record of a server's list: one for everybody (a token server), or one per person (an OAuth
    server's, listed with that person's token: two people never share a list)."""
    return entry.name if user_id is None else f"{entry.name}#{user_id}"


@dataclass
class RemoteToolCaller:
    """What calls need: the servers' records (for the breaker), the client, the ledger, tokens and time.
    `accounts`: people's tokens at the OAuth servers (None: accounts are not deployed)."""

    cache: RemoteToolCache
    servers: Callable[[], RemoteServers]  # the SDK adapter, built (and imported) on first use
    ledger: ToolCallLedger
    headers: Callable[[ServerEntry], dict[str, str]]
    now: Callable[[], int]  # epoch seconds
    limits: RemoteLimits
    accounts: AccountTokens | None = None
    known: dict[str, ServerRecord] = field(default_factory=dict)  # the records as last read or written

    def connection(
        self, entry: ServerEntry, user_id: int | None = None, *, renewed: bool = False
    ) -> Connection:
        """How to reach the server: with its token, or (an OAuth server) with the person's own access token
        (`renewed`: refreshed once, after the server refused it). RemoteCallError when there is none."""
        timeout = entry.timeout_seconds or self.limits.timeout_seconds
        if entry.auth == "token":
            return Connection(entry.name, entry.url, timeout, self.headers(entry))
        if user_id is None or self.accounts is None:
            raise RemoteCallError("it signs each person in, and no person's account is at hand", counts=False)
        tokens = self.accounts
        headers = tokens.renewed(user_id, entry.name) if renewed else tokens.headers(user_id, entry.name)
        return Connection(entry.name, entry.url, timeout, headers)

    def call(self, remote: RemoteTool, context: ToolContext, args: BaseModel) -> str:
        """Run the call (see the module docstring); an error answer raises ToolError (an is_error result)."""
        server = remote.entry.name
        if context.recorded is not None and not remote.read_only:
            raise ToolError(UNKNOWN_OUTCOME.format(server=server))
        if remote.user_id is not None and (context.scope.in_group or context.user_id != remote.user_id):
            raise ToolError(
                f"The outside MCP server “{server}” is not connected for this chat. Nothing was sent."
            )
        record = self.known.get(remote.record)
        if record is not None and record.skipped(self.now()):
            until = datetime.fromtimestamp(record.skipped_until, UTC).strftime("%H:%M UTC")
            raise ToolError(
                f"The outside MCP server “{server}” is temporarily unavailable: it failed several times in a "
                f"row, so it is left alone until {until}. Nothing was sent."
            )
        if context.recorded is None:
            self.ledger.record_intent(context.call_id, INTENT)
        try:
            answer = self._send(remote, args.model_dump(mode="json"))
        except RemoteCallError as error:
            self.failed(remote.record, error)
            outcome = " It may or may not have acted." if error.may_have_run else " Nothing was done."
            text = framed(
                server,
                f"{CALL_FAILED}{error}.{outcome if error.counts else ''}",
                self.limits.max_result_chars,
            )
            self.ledger.complete(context.call_id, text, is_error=True)
            raise ToolError(text) from None
        self.succeeded(remote.record)
        text, is_error = render(server, answer, self.limits.max_result_chars)
        self.ledger.complete(context.call_id, text, is_error=is_error)
        if is_error:
            raise ToolError(text)
        return text

    def _send(self, remote: RemoteTool, arguments: dict[str, Any]) -> dict[str, Any]:
        """The `tools/call`; a person's token the server refused (401: nothing ran) is refreshed once and the
        call sent once more."""
        try:
            connection = self.connection(remote.entry, remote.user_id)
            return self.servers().call_tool(connection, remote.tool, arguments, remote.listing)
        except RemoteCallError as error:
            if not (error.unauthorized and remote.user_id is not None):
                raise
        connection = self.connection(remote.entry, remote.user_id, renewed=True)
        return self.servers().call_tool(connection, remote.tool, arguments, remote.listing)

    def describe(self, remote: RemoteTool, args: BaseModel, room: int) -> str:
        """What the approval message says the call will do: every argument, within `room` (see
        `stepwise.approvals.arguments`; raises its `TooLongToShowError`)."""
        head = f"Call {remote.tool} on the outside MCP server “{remote.entry.name}” with:\n"
        return head + argument_lines(args.model_dump(mode="json"), room - tg_len(head))

    def failed(self, server: str, error: RemoteCallError) -> None:
        """Count a failure of the server (when it is one), opening its breaker at the threshold."""
        logger.warning(f"MCP server {server}: {error}")
        if not error.counts:
            return
        limits = self.limits
        self.known[server] = self.cache.record_failure(
            server, self.now(), limits.breaker_failures, limits.breaker_seconds
        )

    def succeeded(self, server: str) -> None:
        record = self.known.get(server)
        if record is None or record.failures or record.skipped_until:
            self.cache.record_success(server)
            if record is not None:
                self.known[server] = record.model_copy(update={"failures": 0, "skipped_until": 0})
