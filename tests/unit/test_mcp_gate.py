"""The /mcp endpoint's gate: what a request must pass before the MCP SDK sees it (no network, no moto)."""

from __future__ import annotations

import logging
from datetime import UTC, datetime, timedelta

import pytest

from stepwise.connections.models import Connection, token_hash
from stepwise.mcp import gate
from stepwise.mcp.gate import GateLimits, HttpAnswer, RefusalLog, admit
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


class CountingStore(InMemoryConnectionStore):
    """The store, noting each read and write the gate makes."""

    def __init__(self) -> None:
        super().__init__()
        self.operations: list[str] = []

    def find(self, token_hash: str) -> Connection | None:
        self.operations.append("find")
        return super().find(token_hash)

    def count_request(self, token_hash: str, window: int, limit: int) -> bool:
        self.operations.append("count_request")
        return super().count_request(token_hash, window, limit)


@pytest.mark.parametrize(
    ("token", "reads"),
    [
        ("swp_" + "b" * 64, 1),  # shaped like a token, unknown: its item is read, once
        ("swp_" + "B" * 64, 0),  # not what /connect makes: refused before any read
        ("swp_not-a-token", 0),
        ("x" * 5000, 0),
    ],
)
def test_an_unknown_token_costs_at_most_one_small_read_and_no_write(token: str, reads: int) -> None:
    store = CountingStore()
    for _ in range(50):  # a flood
        refused = admit("POST", {"authorization": f"Bearer {token}"}, 10, store, LIMITS, NOW)
        assert isinstance(refused, HttpAnswer) and refused.status == 401
    assert store.operations == ["find"] * (50 * reads)


def test_a_flood_of_unknown_tokens_is_one_log_line_a_minute(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(gate, "REFUSALS", RefusalLog())  # a new container
    caplog.set_level(logging.INFO, logger="stepwise.mcp.gate")
    store = CountingStore()
    for second in range(150):
        admit("POST", {"authorization": "Bearer swp_x"}, 10, store, LIMITS, NOW + timedelta(seconds=second))
    lines = [r for r in caplog.records if "unknown token" in r.getMessage()]
    assert len(lines) == 3  # minutes 10:00, 10:01, 10:02 (the clock starts at 10:00:20)
    assert [int(getattr(r, "refused", 0)) for r in lines] == [1, 40, 60]  # each counts since the one before
