"""A contact's chat in an owner's Telegram Business account is a conversation of its own (issue 42): told
apart from the contact's own chat with the bot (the same chat id) and from their chat in another owner's
account, with a storage key in a band of its own; whose data its turn reads (the owner's); what records and
payloads written before it existed still read as they did."""

from __future__ import annotations

import random

import pytest
from support.turn_fakes import RecordingStarter

from stepwise.approvals.models import ApprovalRequest
from stepwise.aws.conversation_key import BUSINESS_BASE, TOPIC_FACTOR, conversation_at, conversation_key
from stepwise.history.models import StoredMessage
from stepwise.inbox.models import QueuedMessage, turn_name
from stepwise.jobs.models import Job
from stepwise.memory.service import MemoryService
from stepwise.memory.summarizer import (
    ExtractiveSummarizer,
    SummarizeInput,
    SummarizeServices,
    summarize_chats,
)
from stepwise.reminders.firing import reminder_conversation
from stepwise.reminders.models import Reminder
from stepwise.services import TurnServices
from stepwise.states.contracts.load_context import LoadContextInput
from stepwise.states.load_context import load_context
from stepwise.telegram.conversation import MAX_CHAT, MAX_TOPIC, Conversation, Scope
from stepwise.tools.registry import ToolContext
from stepwise.turn.ref import TurnRef
from stepwise.turn.start import TurnStart
from stepwise.turn_records.models import TurnMeta
from stepwise_local.in_memory.chats import InMemoryChatStore
from stepwise_local.in_memory.embedder import LocalHashEmbedder
from stepwise_local.in_memory.history import InMemoryMessageRepository
from stepwise_local.in_memory.vector_index import InMemoryVectorIndex

OWNER, OTHER_OWNER, CONTACT = 42, 43, 777
AT_OWNER = Conversation(CONTACT, account=OWNER)  # the contact's chat in the owner's account
AT_OTHER = Conversation(CONTACT, account=OTHER_OWNER)  # the same contact's chat in another owner's account
OWN = Conversation(CONTACT)  # the contact's own private chat with the bot
GROUP = -1001234567890


# -- the conversation ------------------------------------------------------------------------------------


def test_a_contacts_chat_is_told_apart_by_the_owner_whose_account_it_is_in() -> None:
    assert (AT_OWNER.chat_id, AT_OWNER.topic, AT_OWNER.account) == (CONTACT, None, OWNER)
    assert len({AT_OWNER, AT_OTHER, OWN, Conversation(CONTACT, account=OWNER)}) == 3
    assert AT_OWNER.in_business and not OWN.in_business and not Conversation(GROUP, 7).in_business
    assert not AT_OWNER.in_group
    assert AT_OWNER.main == AT_OWNER, "a contact's chat is its own main conversation, never the bot chat"
    assert AT_OWNER.label() == f"{CONTACT}b{OWNER}" and repr(AT_OWNER) == f"Conversation({CONTACT}b{OWNER})"
    assert len({c.label() for c in (AT_OWNER, AT_OTHER, OWN, Conversation(CONTACT, 7))}) == 4
    assert Conversation(CONTACT, 1, OWNER) == AT_OWNER, "the General topic is the chat itself"


@pytest.mark.parametrize(
    ("chat", "topic", "account", "error"),
    [
        (-100123, None, OWNER, "not a contact's private chat"),  # a group is never a contact's chat
        (0, None, OWNER, "not a contact's private chat"),
        (CONTACT, 7, OWNER, "not a contact's private chat"),  # nor a topic
        (CONTACT, None, 0, "not an account owner's id"),
        (CONTACT, None, -OWNER, "not an account owner's id"),
        (CONTACT, None, MAX_CHAT + 1, "not an account owner's id"),
        (MAX_CHAT + 1, None, OWNER, "not a chat id"),
    ],
)
def test_a_business_conversation_is_a_private_chat_of_a_real_owner(
    chat: int, topic: int | None, account: int, error: str
) -> None:
    with pytest.raises(ValueError, match=error):
        Conversation(chat, topic, account)


def test_a_secretary_turns_data_is_the_owners_and_its_speaker_the_contact() -> None:
    scope = Scope(AT_OWNER, CONTACT, "Bea")
    assert (scope.owner, scope.user_id, scope.in_group, scope.member) == (OWNER, CONTACT, False, None)
    assert Scope(OWN, CONTACT).owner == CONTACT, "the contact's own chat with the bot is theirs"
    assert Scope(AT_OTHER, CONTACT).owner == OTHER_OWNER
    context = ToolContext(scope, turn_id="t", call_id="c", now="n")
    assert (context.owner, context.user_id) == (OWNER, CONTACT)


# -- the storage key -------------------------------------------------------------------------------------


def _old_conversation_at(key: int) -> Conversation:
    """How keys were read before business conversations (the code as it was)."""
    magnitude = abs(key) % TOPIC_FACTOR
    return Conversation(magnitude if key > 0 else -magnitude, abs(key) // TOPIC_FACTOR or None)


CHAT_EDGES = [1, 2, CONTACT, 10**10, MAX_CHAT - 1, MAX_CHAT]
GROUP_EDGES = [-1, -2, GROUP, -(10**13), -MAX_CHAT]
TOPIC_EDGES = [2, 3, 10**6, MAX_TOPIC - 1, MAX_TOPIC]


def _samples(rng: random.Random) -> list[Conversation]:
    """Every band's edge values, and 3,000 seeded random conversations across the bands."""
    edges = [Conversation(c) for c in CHAT_EDGES + GROUP_EDGES]
    edges += [Conversation(c, t) for c in CHAT_EDGES + GROUP_EDGES for t in TOPIC_EDGES]
    edges += [Conversation(c, account=a) for c in CHAT_EDGES for a in CHAT_EDGES]
    chat = lambda: rng.choice([1, -1]) * rng.randint(1, MAX_CHAT)  # noqa: E731
    person = lambda: rng.randint(1, MAX_CHAT)  # noqa: E731
    drawn = [Conversation(chat()) for _ in range(1000)]
    drawn += [Conversation(chat(), rng.randint(2, MAX_TOPIC)) for _ in range(1000)]
    drawn += [Conversation(person(), account=person()) for _ in range(1000)]
    return edges + drawn


def test_every_conversation_has_a_key_of_its_own_in_its_band_and_reads_back() -> None:
    conversations = _samples(random.Random(42))
    keys = {conversation_key(c): c for c in conversations}
    assert len(keys) == len(set(conversations)), "no two conversations share a key"
    for key, conversation in keys.items():
        assert conversation_at(key) == conversation
        assert len(str(abs(key))) <= 38, "DynamoDB keeps 38 significant digits"
        if conversation.in_business:
            assert BUSINESS_BASE < key < 2 * BUSINESS_BASE
        elif conversation.topic is not None:
            assert TOPIC_FACTOR <= abs(key) < BUSINESS_BASE
        else:
            assert key == conversation.chat_id, "the chat itself keeps its chat id"


def test_the_keys_stored_before_read_as_they_did() -> None:
    for conversation in _samples(random.Random(7)):
        if not conversation.in_business:
            key = conversation_key(conversation)
            assert conversation_at(key) == _old_conversation_at(key) == conversation
    assert conversation_key(AT_OWNER) == 10**32 + OWNER * 10**16 + CONTACT
    assert (
        conversation_key(Conversation(MAX_CHAT, account=MAX_CHAT))
        == 190_071_992_547_409_919_007_199_254_740_991
    )


def test_a_turn_name_in_a_contacts_chat_fits_step_functions() -> None:
    assert turn_name(AT_OWNER, 1, 5) == f"chat{CONTACT}b{OWNER}-turn1-update5"
    longest = turn_name(Conversation(MAX_CHAT, account=MAX_CHAT), 10**8 - 1, 2**64)
    assert len(longest) <= 80, longest


# -- what carries a conversation --------------------------------------------------------------------------


def test_records_and_payloads_carry_the_account_and_those_written_before_read_as_before() -> None:
    ref = {"turn_id": "t", "chat_id": CONTACT, "user_id": CONTACT, "update_id": 5}
    assert TurnRef.model_validate(ref).conversation == OWN
    assert TurnRef.model_validate(ref | {"account": OWNER}).conversation == AT_OWNER
    assert TurnStart.model_validate({"turn": ref}).turn.conversation == OWN, (
        "a turn in flight across a deploy"
    )
    assert TurnRef.model_validate(ref | {"account": OWNER}).log_keys()["account"] == OWNER

    meta = ref | {"user_message_id": "m", "first_key": "a", "last_key": "b", "created_at": "x"}
    assert TurnMeta.model_validate(meta).scope == Scope(OWN, CONTACT)
    business_meta = TurnMeta.model_validate_json(
        TurnMeta.model_validate(meta | {"account": OWNER}).model_dump_json()
    )
    assert business_meta.scope == Scope(AT_OWNER, CONTACT) and business_meta.scope.owner == OWNER

    queued = {
        "chat_id": CONTACT,
        "update_id": 5,
        "user_id": CONTACT,
        "id": "m1",
        "text": "hi",
        "received_at": "x",
    }
    assert QueuedMessage.model_validate(queued).conversation == OWN
    assert QueuedMessage.model_validate(queued | {"account": OWNER}).scope.owner == OWNER

    stored = {"id": "m1", "chat_id": CONTACT, "role": "user", "content": "hi", "created_at": "x"}
    assert StoredMessage.model_validate(stored).conversation == OWN
    assert StoredMessage.model_validate(stored | {"account": OWNER}).conversation == AT_OWNER

    approval = {
        "approval_id": "a1",
        "turn_id": "t",
        "chat_id": CONTACT,
        "user_id": CONTACT,
        "step": 1,
        "calls": [],
        "created_at": "x",
    }
    assert ApprovalRequest.model_validate(approval).conversation == OWN
    assert ApprovalRequest.model_validate(approval | {"account": OWNER}).conversation == AT_OWNER

    job = {
        "user_id": OWNER,
        "number": 1,
        "chat_id": CONTACT,
        "execution": "job-1",
        "title": "t",
        "task": "t",
        "parent_turn_id": "t",
        "created_at": "x",
        "deadline": "y",
    }
    assert Job.model_validate(job).scope.conversation == OWN
    assert Job.model_validate(job | {"account": OWNER}).scope.conversation == AT_OWNER

    reminder = {
        "user_id": OWNER,
        "chat_id": CONTACT,
        "reminder_id": 1,
        "text": "t",
        "expression": "at(2026-11-27T10:00:00)",
        "timezone": "UTC",
        "when": "w",
        "one_time": True,
        "created_at": "x",
    }
    assert reminder_conversation(Reminder.model_validate(reminder)) == OWN
    assert reminder_conversation(Reminder.model_validate(reminder | {"account": OWNER})) == AT_OWNER


def _waiting(where: Conversation, update_id: int, text: str) -> QueuedMessage:
    return QueuedMessage(
        chat_id=where.chat_id,
        account=where.account,
        update_id=update_id,
        user_id=CONTACT,
        id=f"m{update_id}",
        text=text,
        received_at=f"2026-11-27T10:00:0{update_id}.000Z",
    )


def test_a_contacts_messages_to_two_owners_and_to_the_bot_keep_apart(services: TurnServices) -> None:
    """The same person writes to an owner, to another owner and to the bot itself, with the same chat id each
    time: three inboxes (each starts its own turn at once, none waits behind another's lease), three
    histories, three chat records; the business turns' data is their owners'."""
    sequencer = services.outbound.sequencer()
    texts = {AT_OWNER: "hello owner", AT_OTHER: "hello other owner", OWN: "hello bot"}
    admitted = [sequencer.admit(_waiting(where, n, text)) for n, (where, text) in enumerate(texts.items(), 1)]
    assert admitted == ["started", "started", "started"]
    for where in texts:
        assert [m.text for m in sequencer.inbox.pending(where)] == [texts[where]]

    starter = sequencer.starter
    assert isinstance(starter, RecordingStarter)
    starts = {name: TurnStart.model_validate(payload) for name, payload in starter.started.items()}
    assert {start.turn.conversation for start in starts.values()} == set(texts)
    assert f"chat{CONTACT}b{OWNER}-turn1-update1" in starts
    for start in starts.values():
        load_context(LoadContextInput(turn=start.turn), services)
        meta = services.stores.turns.get_meta(start.turn.turn_id)
        assert meta.conversation == start.turn.conversation
        assert meta.scope.owner == {AT_OWNER: OWNER, AT_OTHER: OTHER_OWNER, OWN: CONTACT}[meta.conversation]

    for where, text in texts.items():
        assert [m.content for m in services.stores.messages.recent(where, 10)] == [text]
        chat = services.stores.chats.get(where)
        assert chat is not None and chat.conversation == where


def test_a_contacts_chat_keeps_its_summary_out_of_the_owners_memories() -> None:
    """A summary saved as the owner's memory would be recalled in the owner's own chats with the bot: a
    contact's chat keeps it on its own record only."""
    index = InMemoryVectorIndex()
    services = SummarizeServices(
        chats=InMemoryChatStore(),
        messages=InMemoryMessageRepository(),
        memory=MemoryService(LocalHashEmbedder(), index),
        summarizer=ExtractiveSummarizer(),
        history_limit=2,
        threshold=2,
    )
    for where in (AT_OWNER, Conversation(OWNER)):
        for n in range(6):
            services.messages.add(
                StoredMessage(
                    id=f"m{n}",
                    chat_id=where.chat_id,
                    account=where.account,
                    role="user" if n % 2 == 0 else "assistant",
                    content=f"message {n} about the Lisbon contract",
                    created_at=f"2026-11-27T10:00:0{n}.000Z",
                )
            )
            services.chats.record_message(where, CONTACT if where.in_business else OWNER, 4)
    run = summarize_chats(SummarizeInput(), services)
    assert (run.summarized, run.kept) == (2, 2)
    business = services.chats.get(AT_OWNER)
    assert business is not None and "Lisbon" in business.summary, "its own turns still read it"
    assert [r.metadata["chat_id"] for r in index.records.values()] == [OWNER], "only the owner's own chat's"
