"""Telegram's initData check (stepwise.miniapp.init_data) against a real signed sample and bad input, and the
Mini App's gate (stepwise.miniapp.gate): 401 for anything Telegram did not sign for this bot within the
hour, 403 for a user off the allowlist, 429 past the rate limit, 413 for a large body."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from urllib.parse import quote, urlencode

import pytest

from stepwise.miniapp.gate import AppLimits, HttpAnswer, admit
from stepwise.miniapp.init_data import InitDataError, check_init_data, data_check_string, sign

# A public known-answer vector: Telegram-Mini-Apps/init-data-golang, validate_test.go (signed by Telegram's
# algorithm for that bot token; the data is from 2022-09-10).
SAMPLE = (
    "query_id=AAHdF6IQAAAAAN0XohDhrOrc&user=%7B%22id%22%3A279058397%2C%22first_name%22%3A%22Vladislav%22%2C"
    "%22last_name%22%3A%22Kibenko%22%2C%22username%22%3A%22vdkfrost%22%2C%22language_code%22%3A%22ru%22%2C"
    "%22is_premium%22%3Atrue%7D&auth_date=1662771648"
    "&hash=c501b71e775f74ce10e377dea85a7ea24ecd640b223ea86dfe453e0eaed2e2b2"
)
SAMPLE_TOKEN = "5768337691:AAH5YkoiEuPk8-FZa32hStHTqXiLPtAEhx8"
SIGNED_AT = 1662771648
HOUR = 3600
TOKEN = "123:test-token"


def signed(fields: dict[str, str], token: str = TOKEN) -> str:
    return urlencode({**fields, "hash": sign(fields, token)})


def user_fields(user_id: int = 7, auth_date: int = SIGNED_AT, **extra: str) -> dict[str, str]:
    return {"user": json.dumps({"id": user_id, "first_name": "Ada"}), "auth_date": str(auth_date), **extra}


def test_the_known_answer_sample_is_valid() -> None:
    user = check_init_data(SAMPLE, SAMPLE_TOKEN, SIGNED_AT + 60, HOUR)
    assert (user.user_id, user.first_name, user.auth_date) == (279058397, "Vladislav", SIGNED_AT)


def test_our_signature_matches_telegrams_on_the_sample() -> None:
    fields = dict(pair.split("=", 1) for pair in SAMPLE.split("&"))
    given = fields.pop("hash")
    from urllib.parse import unquote

    decoded = {key: unquote(value) for key, value in fields.items()}
    assert sign(decoded, SAMPLE_TOKEN) == given
    assert data_check_string(decoded).splitlines()[0] == "auth_date=1662771648"  # sorted by key


@pytest.mark.parametrize(
    ("raw", "token", "now", "why"),
    [
        (SAMPLE, SAMPLE_TOKEN, SIGNED_AT + HOUR + 1, "older"),  # stale
        (SAMPLE, "5768337691:another-bot", SIGNED_AT, "does not match"),  # another bot's token
        (SAMPLE.replace("Vladislav", "Vladimir"), SAMPLE_TOKEN, SIGNED_AT, "does not match"),  # tampered
        (SAMPLE + "&query_id=again", SAMPLE_TOKEN, SIGNED_AT, "repeats"),  # a repeated key
        (SAMPLE + "abc", SAMPLE_TOKEN, SIGNED_AT, "no hash"),  # a longer hash
        ("", SAMPLE_TOKEN, SIGNED_AT, "empty"),
        ("x" * 5000, SAMPLE_TOKEN, SIGNED_AT, "too long"),
        ("here comes something wrong;", SAMPLE_TOKEN, SIGNED_AT, "not a query string"),
        ("user=%ff%fe&hash=" + "0" * 64, SAMPLE_TOKEN, SIGNED_AT, "not a query string"),  # not UTF-8
        ("no_hash=true", SAMPLE_TOKEN, SIGNED_AT, "no hash"),
    ],
)
def test_bad_init_data_is_refused(raw: str, token: str, now: int, why: str) -> None:
    with pytest.raises(InitDataError, match=why):
        check_init_data(raw, token, now, HOUR)


def with_hash(given: str) -> str:
    """The sample with its `hash` replaced by `given` (percent-encoded, as a client would send it)."""
    return SAMPLE[: SAMPLE.index("hash=") + 5] + quote(given, safe="")


# A `hash` that is not 64 hex digits: refused as unsigned before any comparison (a non-ASCII one used to
# reach hmac.compare_digest, which raises TypeError for non-ASCII text: a 503 with a traceback).
BAD_HASHES = {
    "non-ASCII, 64 characters": "é" * 64,
    "non-ASCII in a hex hash": "c501b71e775f74ce10e377dea85a7ea24ecd640b223ea86dfe453e0eaed2e2b" + "é",
    "fullwidth digits": "\uff10" * 64,
    "64 characters, not hex": "g" * 64,
    "hex with spaces": " " * 4 + "c501b71e775f74ce10e377dea85a7ea24ecd640b223ea86dfe453e0eaed2",
    "too short": "c501b71e",
    "too long": "c501b71e775f74ce10e377dea85a7ea24ecd640b223ea86dfe453e0eaed2e2b2" + "00",
    "empty": "",
}


@pytest.mark.parametrize("given", BAD_HASHES.values(), ids=BAD_HASHES.keys())
def test_a_hash_that_is_not_64_hex_digits_is_refused(given: str) -> None:
    with pytest.raises(InitDataError, match="no hash"):
        check_init_data(with_hash(given), SAMPLE_TOKEN, SIGNED_AT, HOUR)


@pytest.mark.parametrize("given", BAD_HASHES.values(), ids=BAD_HASHES.keys())
def test_the_gate_answers_401_to_a_hash_that_is_not_64_hex_digits(given: str) -> None:
    fields = user_fields()
    raw = urlencode({**fields, "hash": given})
    answer = gate({"authorization": f"tma {raw}"})
    assert isinstance(answer, HttpAnswer) and answer.status == 401


def test_the_hash_may_be_upper_case_hex() -> None:
    upper = with_hash("c501b71e775f74ce10e377dea85a7ea24ecd640b223ea86dfe453e0eaed2e2b2".upper())
    assert check_init_data(upper, SAMPLE_TOKEN, SIGNED_AT, HOUR).user_id == 279058397


@pytest.mark.parametrize(
    ("fields", "why"),
    [
        ({"user": "{id: 7", "auth_date": str(SIGNED_AT)}, "not JSON"),
        ({"user": json.dumps({"id": "7"}), "auth_date": str(SIGNED_AT)}, "no id"),
        ({"user": json.dumps({"id": True}), "auth_date": str(SIGNED_AT)}, "no id"),
        ({"user": json.dumps([7]), "auth_date": str(SIGNED_AT)}, "no id"),
        ({"auth_date": str(SIGNED_AT)}, "not JSON"),  # no user at all
        ({"user": json.dumps({"id": 7}), "auth_date": "yesterday"}, "auth_date"),
        (user_fields(auth_date=SIGNED_AT + 3600), "future"),
    ],
)
def test_signed_but_unusable_init_data_is_refused(fields: dict[str, str], why: str) -> None:
    with pytest.raises(InitDataError, match=why):
        check_init_data(signed(fields), TOKEN, SIGNED_AT, HOUR)


def test_fields_are_decoded_once_and_signature_stays_in_the_check() -> None:
    # a value that is itself percent-encoded text is signed as that text (decoded once, not twice)
    fields = user_fields(start_param="a%20b", signature="c2lnbmF0dXJl")
    raw = signed(fields)
    assert quote("a%20b", safe="") in raw
    assert check_init_data(raw, TOKEN, SIGNED_AT, HOUR).user_id == 7
    without_signature = raw.replace("&signature=c2lnbmF0dXJl", "")
    with pytest.raises(InitDataError, match="does not match"):
        check_init_data(without_signature, TOKEN, SIGNED_AT, HOUR)


class Counter:
    def __init__(self, room: int) -> None:
        self.room = room
        self.keys: list[tuple[str, int]] = []

    def __call__(self, key: str, window: int, limit: int) -> bool:
        self.keys.append((key, window))
        self.room -= 1
        return self.room >= 0


NOW = datetime.fromtimestamp(SIGNED_AT + 30, UTC)
LIMITS = AppLimits(requests_per_minute=60, allowed_users=frozenset({7}))


def gate(headers: dict[str, str], counter: Counter | None = None, body: int = 0) -> object:
    return admit(headers, body, lambda: TOKEN, counter or Counter(10), LIMITS, NOW)


def test_the_gate_admits_a_signed_allowed_user_and_counts_the_request_per_user() -> None:
    counter = Counter(10)
    user = gate({"authorization": f"tma {signed(user_fields())}"}, counter)
    assert not isinstance(user, HttpAnswer) and user.user_id == 7
    assert counter.keys == [("app-user-7", (SIGNED_AT + 30) // 60)]


@pytest.mark.parametrize(
    ("headers", "status"),
    [
        ({}, 401),
        ({"authorization": "tma "}, 401),
        ({"authorization": f"Bearer {signed(user_fields())}"}, 401),
        ({"authorization": f"tma {signed(user_fields(), '123:other')}"}, 401),
        ({"authorization": f"tma {signed(user_fields(auth_date=SIGNED_AT - HOUR - 1))}"}, 401),
        ({"authorization": f"tma {signed(user_fields(user_id=8))}"}, 403),
    ],
)
def test_the_gate_refuses_with_401_or_403_and_counts_nothing(headers: dict[str, str], status: int) -> None:
    counter = Counter(10)
    answer = gate(headers, counter)
    assert isinstance(answer, HttpAnswer) and answer.status == status
    response = answer.response()
    assert json.loads(str(response["body"])) == {"error": "unauthorized" if status == 401 else "forbidden"}
    assert counter.keys == []
    if status == 401:
        assert answer.headers["www-authenticate"].startswith('tma realm="stepwise"')


def test_the_gate_answers_429_past_the_limit_and_413_for_a_large_body() -> None:
    headers = {"authorization": f"tma {signed(user_fields())}"}
    answer = gate(headers, Counter(0))
    assert isinstance(answer, HttpAnswer) and answer.status == 429
    assert answer.headers["retry-after"] == str(60 - (SIGNED_AT + 30) % 60)
    large = gate(headers, body=LIMITS.max_body_bytes + 1)
    assert isinstance(large, HttpAnswer) and large.status == 413
