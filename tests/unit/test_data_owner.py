"""Whose tasks, reminders and memories a call reaches: the group's in a group, the person's in a private chat,
and always the person's over MCP."""

from __future__ import annotations

from stepwise.approvals.models import Requester
from stepwise.connections.models import Connection
from stepwise.mcp.endpoint import _context
from stepwise.telegram.conversation import data_owner
from stepwise.tools.registry import ToolContext


def test_a_group_owns_its_data_and_a_private_chat_its_user() -> None:
    assert data_owner(-1001234567890, 42) == -1001234567890
    assert data_owner(42, 42) == 42
    assert ToolContext(user_id=42, chat_id=-100555, turn_id="t", call_id="c", now="n").owner == -100555
    assert ToolContext(user_id=42, chat_id=42, turn_id="t", call_id="c", now="n").owner == 42


def test_an_mcp_token_acts_on_its_owners_private_data_even_if_it_names_a_group() -> None:
    class Services:
        def new_id(self) -> str:
            return "id1"

        def clock(self) -> object:
            from datetime import UTC, datetime

            return datetime(2026, 11, 27, tzinfo=UTC)

    for chat in (42, -100555):
        connection = Connection(user_id=42, chat_id=chat, name="laptop", created_at="x", created_by_turn="t")
        context = _context(connection, Services())  # type: ignore[arg-type]
        assert (context.owner, context.user_id) == (42, 42)
        assert context.requester == Requester(kind="mcp_client", name="laptop")
