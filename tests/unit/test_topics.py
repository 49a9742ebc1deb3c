"""Topics: what names a conversation, how the webhook routes a message by topic, and bad topic input."""

from __future__ import annotations

import json
from typing import Any

import pytest
from support.turn_fakes import RecordingStarter

from stepwise.approvals.lifecycle import PressServices
from stepwise.aws.conversation_key import TOPIC_FACTOR, conversation_at, conversation_key
from stepwise.inbox.sequencer import Sequencer
from stepwise.telegram.conversation import Conversation, conversation_of
from stepwise.telegram.models import MAX_CHAT_ID, Update
from stepwise.webhook import WebhookServices, handle_update
from stepwise_local import updates
from stepwise_local.in_memory.approvals import InMemoryApprovalStore
from stepwise_local.in_memory.chats import InMemoryChatStore
from stepwise_local.in_memory.inbox import InMemoryChatInbox
from stepwise_local.in_memory.telegram import InMemoryTelegram

SECRET = "s3cret-token"
USER = 42


@pytest.mark.parametrize(
    ("chat", "topic"),
    [(42, None), (42, 2), (-1001234567890, 99), (MAX_CHAT_ID, 2**31 - 1), (-MAX_CHAT_ID, 2**31 - 1)],
)
def test_a_conversation_is_a_chat_and_a_topic_and_its_key_names_it_alone(
    chat: int, topic: int | None
) -> None:
    where = Conversation(chat, topic)
    key = conversation_key(where)
    assert (where.chat_id, where.topic, where.main) == (chat, topic, Conversation(chat))
    assert conversation_at(key) == where and conversation_at(key).topic == topic
    if topic is None:
        assert key == chat, "the chat itself keeps its chat id as its key: old items are its own"
    else:
        assert abs(key) >= TOPIC_FACTOR > MAX_CHAT_ID, "no topic's key is a chat's id"
        assert len(str(abs(key))) <= 38, "DynamoDB keeps 38 digits"
    assert where.label() == (str(chat) if topic is None else f"{chat}t{topic}")


def test_the_keys_stored_so_far_read_as_they_were_written() -> None:
    assert conversation_key(Conversation(42, 7)) == 70_000_000_000_000_042
    assert conversation_key(Conversation(-1001234567890, 7)) == -70_001_001_234_567_890
    assert conversation_at(-70_001_001_234_567_890) == Conversation(-1001234567890, 7)
    assert conversation_at(42) == Conversation(42)


def test_the_general_topic_is_the_chat_itself() -> None:
    assert Conversation(42, 1) == Conversation(42) and Conversation(42, 1).topic is None


@pytest.mark.parametrize("topic", [0, -5, 2**31])
def test_a_topic_id_out_of_range_is_refused(topic: int) -> None:
    with pytest.raises(ValueError, match="not a topic id"):
        Conversation(42, topic)


def _message(**fields: Any) -> Any:
    update = updates.text_message(USER, "hi")
    update["message"] |= fields
    message = Update.model_validate(update).message
    assert message is not None
    return message


def test_a_message_is_in_a_topic_only_with_is_topic_message() -> None:
    assert conversation_of(_message(message_thread_id=7, is_topic_message=True)).topic == 7
    assert conversation_of(_message(message_thread_id=7)).topic is None, "a reply in an ordinary group"
    assert conversation_of(_message(message_thread_id=7, is_topic_message=False)).topic is None
    assert conversation_of(_message(is_topic_message=True)).topic is None, "a topic message without a thread"
    assert conversation_of(_message(message_thread_id=1, is_topic_message=True)).topic is None, "General"


@pytest.fixture
def starter() -> RecordingStarter:
    return RecordingStarter()


@pytest.fixture
def inbox() -> InMemoryChatInbox:
    return InMemoryChatInbox()


@pytest.fixture
def chats() -> InMemoryChatStore:
    return InMemoryChatStore()


@pytest.fixture
def services(
    starter: RecordingStarter, inbox: InMemoryChatInbox, chats: InMemoryChatStore
) -> WebhookServices:
    telegram = InMemoryTelegram()
    presses = PressServices(approvals=InMemoryApprovalStore(), telegram=lambda: telegram, resumer=None)  # type: ignore[arg-type]
    sequencer = Sequencer(inbox=inbox, starter=starter, approval_timeout_seconds=120)
    return WebhookServices(
        secret=SECRET,
        allowed_users=frozenset({USER}),
        sequencer=lambda: sequencer,
        presses=lambda: presses,
        chats=lambda: chats,
    )


def post(services: WebhookServices, update: dict[str, Any]) -> Any:
    return handle_update(SECRET, json.dumps(update), services)


def test_two_topics_and_the_chat_each_start_their_own_turn_at_once(
    services: WebhookServices, starter: RecordingStarter, inbox: InMemoryChatInbox
) -> None:
    """A turn running in the chat (or in another topic) holds no message of a topic: each conversation has
    its own lease, so each message's webhook starts its own turn; none is queued behind another's."""
    outcomes = [
        post(services, updates.text_message(USER, "in the chat")),
        post(services, updates.text_message(USER, "in topic 7", topic=7)),
        post(services, updates.text_message(USER, "in topic 9", topic=9)),
        post(services, updates.text_message(USER, "more in topic 7", topic=7)),
    ]
    assert [o.action for o in outcomes] == ["started", "started", "started", "queued"]
    assert [o.topic for o in outcomes] == [None, 7, 9, 7]
    assert [o.typing for o in outcomes] == [True] * 4
    turns = [input_["turn"] for input_ in starter.started.values()]
    assert [(t["chat_id"], t.get("topic")) for t in turns] == [(USER, None), (USER, 7), (USER, 9)]
    assert [name.split("-turn")[0] for name in starter.started] == [
        f"chat{USER}",
        f"chat{USER}t7",
        f"chat{USER}t9",
    ]
    assert [m.text for m in inbox.pending(Conversation(USER, 7))] == ["in topic 7", "more in topic 7"]
    assert [m.text for m in inbox.pending(Conversation(USER))] == ["in the chat"]


def test_a_reply_in_an_ordinary_group_is_the_groups_own_conversation(
    services: WebhookServices, starter: RecordingStarter
) -> None:
    services = services._replace(
        group_replies="all"
    )  # a group where it answers every message (docs/groups.md)
    update = updates.text_message(USER, "a reply", chat_id=-100555)
    update["message"]["chat"]["type"] = "supergroup"
    update["message"]["message_thread_id"] = 31  # a reply's thread, not a topic
    assert post(services, update).topic is None
    ((name, started),) = starter.started.items()
    assert started["turn"] == {
        "turn_id": name,
        "chat_id": -100555,
        "user_id": USER,
        "update_id": update["update_id"],
    }, "the execution input of a turn outside any topic is what it was before topics"


def test_a_forum_supergroups_topic_is_a_conversation(
    services: WebhookServices, starter: RecordingStarter
) -> None:
    services = services._replace(
        group_replies="all"
    )  # a group where it answers every message (docs/groups.md)
    update = updates.text_message(USER, "in a forum topic", chat_id=-100777, topic=12)
    update["message"]["chat"]["type"] = "supergroup"
    outcome = post(services, update)
    assert (outcome.action, outcome.chat_id, outcome.topic) == ("started", -100777, 12)
    assert next(iter(starter.started)).startswith("chat-100777t12-turn1-")


@pytest.mark.parametrize("thread", [-5, 0, 2**31, 2**63, "7", 7.0, 7.5, True, None, [7]])
def test_a_bad_message_thread_id_is_answered_200_and_starts_nothing(
    services: WebhookServices, starter: RecordingStarter, thread: Any
) -> None:
    update = updates.text_message(USER, "hi")
    update["message"] |= {"message_thread_id": thread, "is_topic_message": True}
    outcome = post(services, update)
    assert outcome.status == 200
    if thread is None:  # is_topic_message without a thread: the chat itself
        assert (outcome.action, outcome.topic) == ("started", None)
    else:
        assert outcome.action == "invalid" and starter.started == {}


@pytest.mark.parametrize("flag", ["yes", 1, None])
def test_a_bad_is_topic_message_is_answered_200(
    services: WebhookServices, starter: RecordingStarter, flag: Any
) -> None:
    update = updates.text_message(USER, "hi")
    update["message"] |= {"message_thread_id": 7, "is_topic_message": flag}
    outcome = post(services, update)
    assert outcome.status == 200
    assert outcome.action == ("started" if flag is None else "invalid")
    assert outcome.topic is None


def test_a_topic_in_a_chat_of_an_unknown_type_is_routed_by_topic(
    services: WebhookServices, starter: RecordingStarter
) -> None:
    update = updates.text_message(USER, "hi", chat_id=-100888, topic=5)
    update["message"]["chat"]["type"] = "something_new"
    outcome = post(services, update)
    assert (outcome.status, outcome.action, outcome.topic) == (200, "started", 5)


def test_a_topic_telegram_named_waits_for_a_name_and_starts_no_turn(
    services: WebhookServices, starter: RecordingStarter, chats: InMemoryChatStore
) -> None:
    outcome = post(services, updates.topic_created(USER, 70, "New Thread", implicit=True))
    assert (outcome.status, outcome.action, outcome.topic) == (200, "topic_noted", 70)
    record = chats.get(Conversation(USER, 70))
    assert record is not None and record.topic_unnamed
    assert starter.started == {}


def test_a_topic_its_user_named_keeps_its_name(
    services: WebhookServices, starter: RecordingStarter, chats: InMemoryChatStore
) -> None:
    outcome = post(services, updates.topic_created(USER, 71, "Trip to Lisbon"))
    assert (outcome.status, outcome.action) == (200, "ignored")
    assert chats.get(Conversation(USER, 71)) is None and starter.started == {}


def test_a_topic_renamed_by_its_user_no_longer_waits_for_a_name(
    services: WebhookServices, chats: InMemoryChatStore
) -> None:
    post(services, updates.topic_created(USER, 72, "New Thread", implicit=True))
    edited = updates.topic_created(USER, 72, "")
    message = edited["message"]
    del message["forum_topic_created"]
    message |= {"message_id": 90, "forum_topic_edited": {"name": "Groceries"}}
    assert post(services, edited).action == "topic_noted"
    record = chats.get(Conversation(USER, 72))
    assert record is not None and not record.topic_unnamed


@pytest.mark.parametrize(
    "service",
    [
        {"forum_topic_created": {"name": "x", "icon_color": 1, "is_name_implicit": "yes"}},
        {"forum_topic_created": {"name": 5}},
        {"forum_topic_created": "topic"},
        {"forum_topic_edited": {"name": ["x"]}},
    ],
)
def test_a_malformed_topic_service_message_is_answered_200(
    services: WebhookServices, starter: RecordingStarter, service: dict[str, Any]
) -> None:
    update = updates.topic_created(USER, 73, "x")
    del update["message"]["forum_topic_created"]
    update["message"] |= service
    outcome = post(services, update)
    assert (outcome.status, outcome.action) == (200, "invalid") and starter.started == {}


def test_a_topic_service_message_outside_a_topic_or_from_a_stranger_is_ignored(
    services: WebhookServices, chats: InMemoryChatStore
) -> None:
    in_chat = updates.topic_created(USER, 74, "x", implicit=True)
    del in_chat["message"]["is_topic_message"]
    assert post(services, in_chat).action == "ignored"
    stranger = updates.topic_created(99, 75, "x", implicit=True)
    assert post(services, stranger).action == "ignored"
    assert chats.chats == {}
