"""/connect on in-memory ports: tokens made, listed and revoked; the token shown once and never kept in the
history; a retried LoadContext shows a token that works; group chats refused."""

from __future__ import annotations

import dataclasses
import re

import pytest
from support.turn_fakes import drive_turn, turn_start

from stepwise.connections.models import MAX_CONNECTIONS, token_hash
from stepwise.inbox.models import QueuedMessage
from stepwise.states.contracts import LoadContextInput
from stepwise.states.load_context import load_context
from stepwise.states.services import TurnServices
from stepwise.turn_ref import TurnRef, TurnStart
from stepwise_local.in_memory.connections import InMemoryConnectionStore
from stepwise_local.in_memory.telegram import InMemoryTelegram

URL = "https://example.execute-api.eu-west-1.amazonaws.com/mcp"
NOW = "2026-11-22T09:00:00.000Z"
TOKEN = re.compile(r"swp_[0-9a-f]{64}")


@pytest.fixture
def store() -> InMemoryConnectionStore:
    return InMemoryConnectionStore()


@pytest.fixture
def with_mcp(services: TurnServices, store: InMemoryConnectionStore) -> TurnServices:
    return dataclasses.replace(services, connections=store, mcp_url=URL)


def say(services: TurnServices, text: str, update_id: int, chat_id: int = 7) -> None:
    drive_turn(services, turn_start(services, text, update_id=update_id, chat_id=chat_id))


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
    history = [m.content for m in with_mcp.messages.recent(7, 20)]
    assert history[0] == "/connect laptop" and token not in history[1] and "shown here once" in history[1]


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
    with_mcp.sequencer().inbox.enqueue(
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
    first = with_mcp.turns.get_reply(start.turn.turn_id)
    assert first is not None
    del with_mcp.turns.replies[start.turn.turn_id]  # died after the step, before the reply was recorded
    load_context(LoadContextInput(turn=start.turn), with_mcp)
    second = with_mcp.turns.get_reply(start.turn.turn_id)
    assert second is not None and second.kept_text == first.kept_text
    (connection,) = store.list(7)
    assert connection.token_hash == token_hash(TOKEN.findall(second.text)[0])  # the one shown now works
    assert connection.token_hash != token_hash(TOKEN.findall(first.text)[0])  # the unseen one does not
