"""/connect on in-memory ports: tokens made, listed and revoked; the token made only as FinishTurn sends it,
shown once and kept nowhere (no record holds it, or the seed it is made from once it is delivered); retried
states show one token that works; an answer that never reaches the chat revokes its token; group chats
refused."""

from __future__ import annotations

import dataclasses
import re
from typing import Any

import pytest
from support.turn_fakes import drive_turn, turn_settings, turn_start

from stepwise.connections.minting import TOKEN_SLOT, token_from_seed, token_key
from stepwise.connections.models import MAX_CONNECTIONS, token_hash
from stepwise.inbox.models import QueuedMessage
from stepwise.services import TurnServices
from stepwise.states.contracts.finish_turn import FinishTurnInput
from stepwise.states.contracts.load_context import LoadContextInput
from stepwise.states.finish_turn import finish_turn
from stepwise.states.load_context import load_context
from stepwise.telegram.conversation import Conversation
from stepwise.telegram.errors import TelegramForbidden, TelegramTransientError
from stepwise.turn.ref import TurnRef
from stepwise.turn.start import TurnStart
from stepwise.turn_records.models import NewToken, Reply
from stepwise_local.in_memory.connections import InMemoryConnectionStore
from stepwise_local.in_memory.history import InMemoryMessageRepository
from stepwise_local.in_memory.telegram import InMemoryTelegram
from stepwise_local.in_memory.turn_records import InMemoryTurnStore

URL = "https://example.execute-api.eu-west-1.amazonaws.com/mcp"
NOW = "2026-11-22T09:00:00.000Z"
TOKEN = re.compile(r"swp_[0-9a-f]{64}")
KEY = token_key("123456:unit-test-bot-token")


@pytest.fixture
def store() -> InMemoryConnectionStore:
    return InMemoryConnectionStore()


@pytest.fixture
def with_mcp(services: TurnServices, store: InMemoryConnectionStore) -> TurnServices:
    stores = dataclasses.replace(services.stores, connections=store, token_key=lambda: KEY)
    return dataclasses.replace(services, stores=stores, settings=turn_settings(mcp_url=URL))


def say(services: TurnServices, text: str, update_id: int, chat_id: int = 7) -> None:
    drive_turn(services, turn_start(services, text, update_id=update_id, chat_id=chat_id))


def records(services: TurnServices, store: InMemoryConnectionStore) -> str:
    """Everything the turn's records, the history and the connections hold, as one text."""
    turns, messages = services.stores.turns, services.stores.messages
    assert isinstance(turns, InMemoryTurnStore) and isinstance(messages, InMemoryMessageRepository)
    kept = [*turns.metas.values(), *turns.step_records.values(), *turns.replies.values()]
    kept += [*store.connections.values(), *messages.recent(Conversation(7), 100)]
    return "\n".join(r.model_dump_json() for r in kept)


def token_of(reply: Reply | None) -> NewToken:
    """The new token a reply of /connect <name> shows."""
    assert reply is not None and isinstance(reply.extra, NewToken)
    return reply.extra


def shown_token(telegram: InMemoryTelegram) -> str:
    (token,) = set(TOKEN.findall(telegram.texts(7)[-1]))
    return token


def test_connect_makes_a_token_shows_it_once_and_keeps_only_its_hash(
    with_mcp: TurnServices, store: InMemoryConnectionStore, telegram: InMemoryTelegram
) -> None:
    say(with_mcp, "/connect laptop", 1)
    shown = telegram.texts(7)[-1]
    token = TOKEN.findall(shown)[0]
    assert URL in shown and f'--header "Authorization: Bearer {token}"' in shown
    (connection,) = store.list(7)
    assert (connection.name, connection.user_id, connection.chat_id) == ("laptop", 7, 7)
    assert connection.token_hash == token_hash(token) and token not in connection.model_dump_json()
    history = [m.content for m in with_mcp.stores.messages.recent(Conversation(7), 20)]
    assert history[0] == "/connect laptop" and token not in history[1] and "shown here once" in history[1]
    # no record holds the token, and the seed it was made from is forgotten
    reply = with_mcp.stores.turns.get_reply("turn-1")
    assert reply is not None and token_of(reply).seed is None and not token_of(reply).revoked
    assert TOKEN_SLOT in reply.text and token not in records(with_mcp, store)


def test_connect_lists_and_revokes_and_refuses_what_it_cannot_do(
    with_mcp: TurnServices, store: InMemoryConnectionStore, telegram: InMemoryTelegram
) -> None:
    say(with_mcp, "/connect", 1)
    assert "no tokens" in telegram.texts(7)[-1]
    say(with_mcp, "/connect laptop", 2)
    say(with_mcp, "/connect laptop", 3)
    assert "already" in telegram.texts(7)[-1] and len(store.list(7)) == 1
    say(with_mcp, "/connect bad/name", 4)
    assert "letters, digits" in telegram.texts(7)[-1]
    say(with_mcp, "/connect", 5)
    assert "laptop</code> (since" in telegram.texts(7)[-1] and not TOKEN.search(telegram.texts(7)[-1])
    say(with_mcp, "/connect revoke phone", 6)
    assert "no token named “phone”" in telegram.texts(7)[-1]
    say(with_mcp, "/connect revoke laptop", 7)
    assert "Revoked" in telegram.texts(7)[-1] and store.list(7) == []


def test_a_user_has_at_most_max_connections(
    with_mcp: TurnServices, store: InMemoryConnectionStore, telegram: InMemoryTelegram
) -> None:
    for n in range(MAX_CONNECTIONS + 1):
        say(with_mcp, f"/connect device{n}", n + 1)
    assert len(store.list(7)) == MAX_CONNECTIONS
    assert "revoke one first" in telegram.texts(7)[-1]


def test_tokens_are_made_in_the_private_chat_only(
    with_mcp: TurnServices, store: InMemoryConnectionStore, telegram: InMemoryTelegram
) -> None:
    group, user = -100, 7
    with_mcp.outbound.sequencer().inbox.enqueue(
        QueuedMessage(
            chat_id=group, update_id=1, user_id=user, id="m1", text="/connect laptop", received_at=NOW
        ),
        expires_at=0,
    )
    drive_turn(with_mcp, TurnStart(turn=TurnRef(turn_id="t1", chat_id=group, user_id=user, update_id=1)))
    assert store.list(user) == []
    assert "private chat" in telegram.texts(group)[-1]


def test_without_the_endpoint_connect_says_so(services: TurnServices, telegram: InMemoryTelegram) -> None:
    say(services, "/connect laptop", 1)
    assert telegram.texts(7) == ["The MCP endpoint is not deployed here."]


def test_a_retried_load_context_before_the_reply_was_recorded_shows_a_token_that_works(
    with_mcp: TurnServices, store: InMemoryConnectionStore, telegram: InMemoryTelegram
) -> None:
    start = turn_start(with_mcp, "/connect laptop", update_id=1)
    load_context(LoadContextInput(turn=start.turn), with_mcp)
    first = with_mcp.stores.turns.get_reply(start.turn.turn_id)
    assert first is not None and token_of(first).seed is not None
    del with_mcp.stores.turns.replies[start.turn.turn_id]  # died before the reply was recorded
    load_context(LoadContextInput(turn=start.turn), with_mcp)
    second = with_mcp.stores.turns.get_reply(start.turn.turn_id)
    assert token_of(second).seed is not None and token_of(second).kept_text == token_of(first).kept_text
    (connection,) = store.list(7)
    assert connection.pending and not TOKEN.search(second.text)  # no token exists before it is sent
    finish_turn(FinishTurnInput(turn=start.turn), with_mcp)
    token = shown_token(telegram)
    assert token == token_from_seed(KEY, token_of(second).seed)
    assert store.find(token_hash(token)) is not None  # the one shown works
    assert (
        store.find(token_hash(token_from_seed(KEY, token_of(first).seed))) is None
    )  # the unmade one does not


def test_a_retried_finish_turn_sends_the_token_once_and_it_still_works(
    with_mcp: TurnServices, store: InMemoryConnectionStore, telegram: InMemoryTelegram
) -> None:
    start = turn_start(with_mcp, "/connect laptop", update_id=1)
    drive_turn(with_mcp, start)
    finish_turn(FinishTurnInput(turn=start.turn), with_mcp)  # FinishTurn again (its result was lost)
    assert len(telegram.texts(7)) == 1
    assert store.find(token_hash(shown_token(telegram))) is not None


class ForgetfulTurns(InMemoryTurnStore):
    """Turn records whose next record of a sent chunk fails (DynamoDB refused it)."""

    fail_marks = 1

    def mark_sent(self, turn_id: str, sent_chunks: int) -> None:
        if self.fail_marks:
            self.fail_marks -= 1
            raise TimeoutError("the record of the chunk failed")
        super().mark_sent(turn_id, sent_chunks)


def test_a_send_whose_record_failed_shows_the_same_token_again(
    with_mcp: TurnServices, store: InMemoryConnectionStore, telegram: InMemoryTelegram
) -> None:
    services = dataclasses.replace(
        with_mcp, stores=dataclasses.replace(with_mcp.stores, turns=ForgetfulTurns())
    )
    start = turn_start(services, "/connect laptop", update_id=1)
    load_context(LoadContextInput(turn=start.turn), services)  # a command: its reply is ready
    with pytest.raises(TimeoutError):  # FinishTurn fails: the state machine retries it
        finish_turn(FinishTurnInput(turn=start.turn), services)
    reply = services.stores.turns.get_reply("turn-1")
    assert reply is not None and token_of(reply).seed is not None  # not settled: it may not have arrived
    finish_turn(FinishTurnInput(turn=start.turn), services)  # the state machine's retry
    first, again = (set(TOKEN.findall(text)) for text in telegram.texts(7))
    assert first == again  # shown twice (the trade-off of docs/reliability.md), the same token
    assert store.find(token_hash(first.pop())) is not None
    settled = services.stores.turns.get_reply("turn-1")
    assert settled is not None and token_of(settled).seed is None


@pytest.mark.parametrize("how", ["refused for good", "undelivered"])
def test_an_answer_that_never_reaches_the_chat_revokes_its_token(
    with_mcp: TurnServices, store: InMemoryConnectionStore, telegram: InMemoryTelegram, how: str
) -> None:
    start = turn_start(with_mcp, "/connect laptop", update_id=1)
    load_context(LoadContextInput(turn=start.turn), with_mcp)
    if how == "refused for good":  # the user blocked the bot
        blocked = TelegramForbidden("sendMessage", 403, "Forbidden: bot was blocked by the user")
        telegram.fail_next("send_message", blocked)
        finish_turn(FinishTurnInput(turn=start.turn), with_mcp)
    else:  # Telegram kept failing: the state's retries, then FinishTurnUndelivered
        telegram.fail_next("send_message", TelegramTransientError("sendMessage", 502, "Bad Gateway"))
        with pytest.raises(TelegramTransientError):
            finish_turn(FinishTurnInput(turn=start.turn), with_mcp)
        finish_turn(FinishTurnInput(turn=start.turn, deliver=False), with_mcp)
    reply = with_mcp.stores.turns.get_reply("turn-1")
    assert reply is not None and token_of(reply).seed is None and token_of(reply).revoked
    assert telegram.texts(7) == [] and store.list(7) == []  # no connection: no token of it works
    kept = with_mcp.stores.messages.recent(Conversation(7), 20)[-1].content
    assert "never reached this chat" in kept and "/connect laptop makes a new one" in kept
    say(with_mcp, "/connect laptop", 2)  # the way forward
    assert store.find(token_hash(shown_token(telegram))) is not None


def test_a_connection_never_delivered_is_listed_so_and_made_again(
    with_mcp: TurnServices, store: InMemoryConnectionStore, telegram: InMemoryTelegram
) -> None:
    start = turn_start(with_mcp, "/connect laptop", update_id=1)
    load_context(LoadContextInput(turn=start.turn), with_mcp)  # the turn's execution then died for good
    say(with_mcp, "/connect", 2)
    assert "laptop</code> (never delivered" in telegram.texts(7)[-1]
    say(with_mcp, "/connect laptop", 3)
    (connection,) = store.list(7)
    assert connection.created_by_turn == "turn-3"
    assert connection.token_hash == token_hash(shown_token(telegram))


def test_a_token_is_made_from_its_seed_and_a_key_and_from_nothing_less() -> None:
    seed, other_key = "ab" * 32, token_key("654321:another-bot-token")
    token = token_from_seed(KEY, seed)
    assert TOKEN.fullmatch(token) and token == token_from_seed(KEY, seed)  # a retry makes the same token
    assert token != token_from_seed(other_key, seed) and token != token_from_seed(KEY, "cd" * 32)
    assert seed not in token and KEY.hex() not in token


class RefusesTheSecondChunk(InMemoryTelegram):
    """A chat that takes one message and then refuses every other for good (the user blocked the bot)."""

    def send_message(self, chat_id: int, text: str, **kwargs: Any) -> int:
        if self.sent:
            raise TelegramForbidden("sendMessage", 403, "Forbidden: bot was blocked by the user")
        return super().send_message(chat_id, text, **kwargs)


def test_a_token_whose_first_chunk_arrived_stays_even_if_the_rest_is_refused(
    with_mcp: TurnServices, store: InMemoryConnectionStore
) -> None:
    # Given an endpoint URL so long that the answer takes two messages (the token is in the first)
    telegram = RefusesTheSecondChunk()
    services = dataclasses.replace(
        with_mcp,
        outbound=dataclasses.replace(with_mcp.outbound, telegram=lambda: telegram),
        settings=turn_settings(mcp_url="https://example.com/" + "x" * 3000 + "/mcp"),
    )
    drive_turn(services, turn_start(services, "/connect laptop", update_id=1))
    # Then the token that arrived works, and the history says it was shown
    (first,) = telegram.texts(7)
    token = TOKEN.findall(first)[0]
    assert store.find(token_hash(token)) is not None
    reply = services.stores.turns.get_reply("turn-1")
    assert reply is not None and reply.sent_chunks == 1
    assert token_of(reply).seed is None and not token_of(reply).revoked
    assert "shown here once" in services.stores.messages.recent(Conversation(7), 20)[-1].content
