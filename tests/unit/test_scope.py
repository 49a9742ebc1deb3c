"""Whose a turn is: a conversation is a chat and a topic; a Scope says who speaks and whose tasks, reminders
and memories a call reaches (the group's in a group, the person's in a private chat, and always the person's
over MCP)."""

from __future__ import annotations

from datetime import UTC, datetime

from stepwise.approvals.models import Requester
from stepwise.connections.models import Connection
from stepwise.inbox.models import QueuedMessage, turn_name
from stepwise.mcp.endpoint import _context
from stepwise.telegram.conversation import Conversation, Scope
from stepwise.tools.registry import ToolContext
from stepwise.turn.ref import TurnRef
from stepwise.turn_records.models import TurnMeta

GROUP = -1001234567890


def test_a_group_owns_its_data_and_a_private_chat_its_user() -> None:
    in_group = Scope(Conversation(GROUP, 7), 42, "Ada")
    assert (in_group.in_group, in_group.owner, in_group.member) == (True, GROUP, "Ada")
    private = Scope(Conversation(42), 42)
    assert (private.in_group, private.owner, private.member) == (False, 42, None)
    assert Scope(Conversation(GROUP), 42).member == "", "a member whose name is unknown"
    assert ToolContext(in_group, turn_id="t", call_id="c", now="n").owner == GROUP
    assert ToolContext(private, turn_id="t", call_id="c", now="n").owner == 42


def test_a_conversation_is_a_hashable_value() -> None:
    assert Conversation(42, 7) == Conversation(42, 7) and Conversation(42, 7) != Conversation(42)
    assert len({Conversation(42, 7), Conversation(42, 7), Conversation(42, 1), Conversation(42)}) == 2
    assert repr(Conversation(GROUP, 7)) == f"Conversation({GROUP}t7)"


def test_an_mcp_token_acts_on_its_owners_private_data_even_if_it_names_a_group() -> None:
    class Services:
        def new_id(self) -> str:
            return "id1"

        def clock(self) -> datetime:
            return datetime(2026, 11, 27, tzinfo=UTC)

    for chat in (42, -100555):
        connection = Connection(user_id=42, chat_id=chat, name="laptop", created_at="x", created_by_turn="t")
        context = _context(connection, Services())  # type: ignore[arg-type]
        assert (context.owner, context.user_id, context.scope.conversation) == (42, 42, Conversation(42))
        assert context.requester == Requester(kind="mcp_client", name="laptop")


def test_a_queued_message_and_a_turns_record_in_todays_shape_carry_their_scope() -> None:
    queued = QueuedMessage.model_validate_json(
        '{"chat_id": -1001234567890, "topic": 7, "update_id": 5, "user_id": 42, "id": "m1", "text": "hi",'
        ' "sender": "Ada", "chat_title": "Family", "received_at": "2026-11-27T10:00:00Z"}'
    )
    assert queued.scope == Scope(Conversation(GROUP, 7), 42, "Ada") and queued.scope.owner == GROUP
    meta = TurnMeta.model_validate_json(
        '{"turn_id": "chat42-turn1-update5", "chat_id": 42, "user_id": 42, "update_id": 5,'
        ' "user_message_id": "m1", "first_key": "a", "last_key": "b", "created_at": "2026-11-27T10:00:00Z"}'
    )
    assert meta.scope == Scope(Conversation(42), 42) and meta.scope.owner == 42
    ref = TurnRef.model_validate(
        {"turn_id": "chat42t7-turn1-update5", "chat_id": 42, "user_id": 42, "update_id": 5}
    )
    assert ref.conversation == Conversation(42)
    assert turn_name(Conversation(42, 7), 1, 5) == "chat42t7-turn1-update5"
    assert turn_name(Conversation(GROUP), 2, 6) == f"chat{GROUP}-turn2-update6"
