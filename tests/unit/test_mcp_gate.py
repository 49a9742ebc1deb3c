"""The /mcp endpoint's gate: what a request must pass before the MCP SDK sees it (no network, no moto)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from stepwise.connections.models import Connection, token_hash
from stepwise.mcp.gate import GateLimits, HttpAnswer, admit
from stepwise_local.in_memory.connections import InMemoryConnectionStore

TOKEN = "swp_" + "a" * 64
NOW = datetime(2026, 11, 25, 10, 0, 20, tzinfo=UTC)
LIMITS = GateLimits(max_body_bytes=1000, requests_per_minute=2, allowed_users=frozenset({7}))


@pytest.fixture
def store() -> InMemoryConnectionStore:
    connections = InMemoryConnectionStore()
    connections.create(
        Connection(
            user_id=7,
            chat_id=7,
            name="laptop",
            token_hash=token_hash(TOKEN),
            created_at="2026-11-25T09:00:00.000Z",
            created_by_turn="turn-1",
        )
    )
    return connections


def test_a_request_with_a_known_token_acts_as_its_connection(store: InMemoryConnectionStore) -> None:
    admitted = admit("POST", {"authorization": f"Bearer {TOKEN}"}, 10, store, LIMITS, NOW)
    assert isinstance(admitted, Connection) and (admitted.user_id, admitted.name) == (7, "laptop")
    assert isinstance(
        admit("post", {"authorization": f"bearer  {TOKEN} "}, 10, store, LIMITS, NOW), Connection
    )


@pytest.mark.parametrize(
    ("authorization", "challenge"),
    [
        (None, 'Bearer realm="stepwise"'),
        ("", 'Bearer realm="stepwise"'),
        ("Bearer", 'Bearer realm="stepwise"'),
        (f"Basic {TOKEN}", 'Bearer realm="stepwise"'),
        ("Bearer swp_not-a-token", 'Bearer realm="stepwise", error="invalid_token"'),
        (f"Bearer {TOKEN}x", 'Bearer realm="stepwise", error="invalid_token"'),
    ],
)
def test_a_missing_or_unknown_token_gets_401_and_a_challenge_and_nothing_else(
    store: InMemoryConnectionStore, authorization: str | None, challenge: str
) -> None:
    headers = {} if authorization is None else {"authorization": authorization}
    refused = admit("POST", headers, 10, store, LIMITS, NOW)
    assert isinstance(refused, HttpAnswer)
    assert refused.response() == {
        "statusCode": 401,
        "headers": {"content-type": "application/json", "www-authenticate": challenge},
        "body": '{"error": "unauthorized"}',
    }


def test_the_token_of_a_user_taken_off_the_allowlist_stops_working(store: InMemoryConnectionStore) -> None:
    headers = {"authorization": f"Bearer {TOKEN}"}
    refused = admit("POST", headers, 10, store, GateLimits(allowed_users=frozenset({8})), NOW)
    assert isinstance(refused, HttpAnswer) and refused.status == 401


def test_a_revoked_token_is_unknown(store: InMemoryConnectionStore) -> None:
    assert store.revoke(7, "laptop")
    refused = admit("POST", {"authorization": f"Bearer {TOKEN}"}, 10, store, LIMITS, NOW)
    assert isinstance(refused, HttpAnswer) and refused.status == 401


@pytest.mark.parametrize("method", ["GET", "DELETE", "PUT", "OPTIONS"])
def test_anything_but_post_gets_405_before_the_token_is_looked_at(
    store: InMemoryConnectionStore, method: str
) -> None:
    refused = admit(method, {}, 0, store, LIMITS, NOW)
    assert isinstance(refused, HttpAnswer) and (refused.status, refused.headers) == (405, {"allow": "POST"})


def test_a_body_over_the_limit_gets_413(store: InMemoryConnectionStore) -> None:
    headers = {"authorization": f"Bearer {TOKEN}"}
    assert isinstance(admit("POST", headers, 1000, store, LIMITS, NOW), Connection)
    refused = admit("POST", headers, 1001, store, LIMITS, NOW)
    assert isinstance(refused, HttpAnswer) and refused.status == 413


def test_past_its_requests_per_minute_a_token_gets_429_until_the_next_minute(
    store: InMemoryConnectionStore,
) -> None:
    headers = {"authorization": f"Bearer {TOKEN}"}
    answers = [admit("POST", headers, 10, store, LIMITS, NOW) for _ in range(3)]
    assert [isinstance(a, Connection) for a in answers] == [True, True, False]
    refused = answers[-1]
    assert isinstance(refused, HttpAnswer) and refused.status == 429
    assert refused.headers == {"retry-after": "40"}  # 10:00:20 -> 10:01:00
    next_minute = NOW.replace(minute=1)
    assert isinstance(admit("POST", headers, 10, store, LIMITS, next_minute), Connection)
