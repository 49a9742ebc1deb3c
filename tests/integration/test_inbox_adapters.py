"""The in-memory inbox behaves like the DynamoDB one (moto, the template's InboxTable)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from moto import mock_aws

from stepwise.inbox.dynamodb import DynamoChatInbox
from stepwise.inbox.models import Fired, NewLease, QueuedMessage, Typed, scheduled_update_id
from stepwise.telegram.conversation import Conversation
from stepwise.telegram.models import MAX_UPDATE_ID
from stepwise_local.in_memory.inbox import InMemoryChatInbox
from stepwise_local.template import Template


@pytest.fixture(scope="module")
def table() -> Iterator[Any]:
    with mock_aws():
        resource = boto3.resource(
            "dynamodb", region_name="us-east-1", aws_access_key_id="testing", aws_secret_access_key="testing"
        )
        (spec,) = [t for t in Template().tables() if t.logical_id == "InboxTable"]
        resource.meta.client.create_table(**{**spec.create_args, "TableName": "InboxAdapterTests"})
        yield resource.Table("InboxAdapterTests")


_chats = iter(range(-30_000, -20_000))


@pytest.fixture(params=["memory", "dynamodb"])
def inbox(request: pytest.FixtureRequest, table: Any) -> Any:
    return InMemoryChatInbox() if request.param == "memory" else DynamoChatInbox(table)


def message(chat: int, update_id: int, text: str = "hi") -> QueuedMessage:
    return QueuedMessage(
        chat_id=chat,
        update_id=update_id,
        user_id=7,
        id=f"id{update_id}",
        text=text,
        received_at="2026-11-23T09:00:00.000Z",
        telegram_message_id=3,
    )


def test_enqueue_take_finish_and_give_back(inbox: Any) -> None:
    chat = next(_chats)
    assert inbox.enqueue(message(chat, 2, "second"), 0) == "new"
    assert inbox.enqueue(message(chat, 1, "first"), 0) == "new"
    assert inbox.enqueue(message(chat, 1, "first"), 0) == "queued"
    assert [(m.update_id, m.text, m.status) for m in inbox.pending(Conversation(chat))] == [
        (1, "first", "queued"),
        (2, "second", "queued"),
    ]
    first = inbox.pending(Conversation(chat))[0]
    taken = inbox.take(first, "turn-a", "2026-11-23T09:00:01.000Z")
    assert taken is not None and (taken.status, taken.turn_id, taken.claimed_at) == (
        "taken",
        "turn-a",
        "2026-11-23T09:00:01.000Z",
    )
    again = inbox.take(first, "turn-a", "2026-11-23T09:59:59.000Z")
    assert again is not None and again.claimed_at == "2026-11-23T09:00:01.000Z", "a retry keeps its place"
    assert inbox.take(first, "turn-b", "2026-11-23T09:00:02.000Z") is None
    assert inbox.enqueue(message(chat, 1), 0) == "taken"
    inbox.give_back(taken)
    back = inbox.pending(Conversation(chat))[0]
    assert (back.status, back.turn_id, back.claimed_at, back.requeues) == (
        "queued",
        None,
        "2026-11-23T09:00:01.000Z",
        1,
    )
    retaken = inbox.take(back, "turn-b", "2026-11-23T09:00:03.000Z")
    assert retaken is not None
    inbox.finish(retaken, 0)
    assert inbox.enqueue(message(chat, 1), 0) == "done"
    assert [m.update_id for m in inbox.pending(Conversation(chat))] == [2]
    assert retaken.telegram_message_id == 3 and retaken.chat_id == chat


def test_the_lease(inbox: Any) -> None:
    chat = next(_chats)
    lease = inbox.acquire_new(Conversation(chat), 7, 1000, 60)
    first = lease.name
    assert lease == NewLease(f"chat{chat}-turn1-update7", previous_start=None), "the chat's first turn"
    assert inbox.acquire_new(Conversation(chat), 7, 1000, 60) is None, "held"
    assert inbox.holder(Conversation(chat)) == (first, 1060)
    assert not inbox.release(Conversation(chat), "someone-else")
    assert inbox.release(Conversation(chat), first)
    assert inbox.holder(Conversation(chat)) is None
    second = inbox.acquire_new(Conversation(chat), 8, 1001, 60)
    assert second == NewLease(f"chat{chat}-turn2-update8", 1000), "a new name; the previous turn's start"
    second = second.name
    assert not inbox.reacquire(Conversation(chat), first, 1002, 60), (
        "a parked turn waits while another holds the chat"
    )
    assert inbox.acquire_new(Conversation(chat), 9, 1062, 60) == NewLease(
        f"chat{chat}-turn3-update9", 1001
    ), "expired: free"
    assert inbox.reacquire(Conversation(chat), f"chat{chat}-turn3-update9", 1063, 60), "the holder may renew"
    assert inbox.release(Conversation(chat), f"chat{chat}-turn3-update9")
    assert inbox.reacquire(Conversation(chat), first, 1064, 60), "a free chat can be taken back"
    assert inbox.holder(Conversation(chat)) == (first, 1124)


def test_a_fired_reminder_keeps_its_kind_and_waits_after_every_telegram_update(inbox: Any) -> None:
    chat = next(_chats)
    fired = message(chat, scheduled_update_id(1_795_000_000, 7, 2), "call mom").model_copy(
        update={"kind": Fired(kind="reminder", reminder_id=2), "telegram_message_id": None}
    )
    assert inbox.enqueue(fired, 0) == "new"
    assert inbox.enqueue(message(chat, MAX_UPDATE_ID, "typed"), 0) == "new"
    assert inbox.enqueue(fired, 0) == "queued", "a second delivery of the firing adds nothing"
    assert [(m.kind, m.text) for m in inbox.pending(Conversation(chat))] == [
        (Typed(), "typed"),
        (Fired(kind="reminder", reminder_id=2), "call mom"),
    ]


def test_each_topic_has_its_own_queue_and_lease(inbox: Any) -> None:
    """Topics of one chat run side by side: their own waiting messages and lease, and their turns' names."""
    chat = next(_chats)
    main, topic = Conversation(chat), Conversation(chat, 42)
    assert inbox.enqueue(message(chat, 1, "main"), 0) == "new"
    assert inbox.enqueue(message(chat, 2, "topic").model_copy(update={"topic": 42}), 0) == "new"
    assert [m.text for m in inbox.pending(main)] == ["main"]
    (waiting,) = inbox.pending(topic)
    assert (waiting.text, waiting.topic, waiting.conversation) == ("topic", 42, topic)
    first = inbox.acquire_new(main, 1, 100, 60)
    second = inbox.acquire_new(topic, 2, 100, 60)
    assert first is not None and second is not None, "a busy chat does not hold its topic"
    assert first.name == f"chat{chat}-turn1-update1" and second.name == f"chat{chat}t42-turn1-update2"
    assert inbox.holder(topic) == (second.name, 160) and inbox.holder(main) == (first.name, 160)
    taken = inbox.take(waiting, second.name, "2026-11-23T09:00:01.000Z")
    assert taken is not None and taken.topic == 42
    inbox.finish(taken, 0)
    assert inbox.enqueue(message(chat, 2, "topic").model_copy(update={"topic": 42}), 0) == "done"
    assert [m.text for m in inbox.pending(main)] == ["main"]


def test_an_item_queued_before_topics_is_the_chats_main_conversation(table: Any) -> None:
    """A waiting message and a lease written by the code before topics read as the chat's own."""
    chat = next(_chats)
    old = message(chat, 5, "queued before the upgrade")
    table.put_item(
        Item={
            "chat_id": chat,
            "sk": "q#00000000000000000005",
            "message": old.model_dump_json(
                include={"chat_id", "update_id", "user_id", "id", "text", "received_at"}
            ),
            "status": "queued",
            "requeues": 0,
        }
    )
    table.put_item(Item={"chat_id": chat, "sk": "lease", "generation": 4, "started_at": 50})
    inbox = DynamoChatInbox(table)
    (waiting,) = inbox.pending(Conversation(chat))
    assert (waiting.text, waiting.topic, waiting.conversation) == (
        "queued before the upgrade",
        None,
        Conversation(chat),
    )
    lease = inbox.acquire_new(Conversation(chat), 5, 100, 60)
    assert lease == NewLease(f"chat{chat}-turn5-update5", 50), "the chat's generations go on"
    assert inbox.pending(Conversation(chat, 3)) == []


_people = iter(range(20_000, 30_000))


def test_a_contacts_chat_in_each_owners_account_has_its_own_queue_and_lease(inbox: Any) -> None:
    """Issue 42: the same contact (one chat id) writing to an owner, to another owner and to the bot itself
    fills three inboxes, each with its own lease, turn names and done markers."""
    contact = next(_people)
    at_owner, at_other, own = (
        Conversation(contact, account=501),
        Conversation(contact, account=502),
        Conversation(contact),
    )
    conversations = (at_owner, at_other, own)
    waiting: dict[Conversation, QueuedMessage] = {}
    for where in conversations:
        queued = message(contact, 1, where.label()).model_copy(update={"account": where.account})
        assert inbox.enqueue(queued, 0) == "new", "the same update id: each conversation keeps its own"
        (waiting[where],) = inbox.pending(where)
        assert (waiting[where].text, waiting[where].conversation) == (where.label(), where)
    leases = [inbox.acquire_new(where, 1, 100, 60) for where in conversations]
    assert [lease.name if lease else None for lease in leases] == [
        f"chat{contact}b501-turn1-update1",
        f"chat{contact}b502-turn1-update1",
        f"chat{contact}-turn1-update1",
    ], "no conversation waits behind another's lease"
    name = f"chat{contact}b501-turn1-update1"
    taken = inbox.take(waiting[at_owner], name, "2026-11-23T09:00:01.000Z")
    assert taken is not None and (taken.account, taken.conversation) == (501, at_owner)
    inbox.finish(taken, 0)
    assert inbox.pending(at_owner) == [] and inbox.release(at_owner, name)
    assert [[m.status for m in inbox.pending(where)] for where in (at_other, own)] == [["queued"], ["queued"]]
    assert inbox.holder(own) == (f"chat{contact}-turn1-update1", 160)
