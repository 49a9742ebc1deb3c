"""Telegram's `initData`, checked as Telegram documents it ("Validating data received via the Mini App"):

- the secret key is HMAC-SHA256 of the bot token, keyed with the constant "WebAppData";
- the data-check string is every field but `hash` (the newer `signature` stays in), as `key=value`, sorted by
  key and joined with line feeds;
- the data is Telegram's when the hex HMAC-SHA256 of that string under the secret key equals `hash`
  (compared in constant time).

The query string is URL-decoded once, strictly; a repeated key, a field that is not `key=value`, a `hash`
that is not 64 hex digits, or a `user` that is not a JSON object with an integer id is refused. Telegram sets
no maximum age: `auth_date` is checked here against `max_age_seconds`, and a date in the future (beyond a
minute of clock skew) is refused.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
from dataclasses import dataclass
from urllib.parse import parse_qsl

MAX_INIT_DATA_CHARS = 4096  # Telegram's initData is a few hundred characters
CLOCK_SKEW_SECONDS = 60
SECRET_LABEL = b"WebAppData"
# A hex HMAC-SHA256, ASCII only (`re.ASCII`: no other script's digits); anything else is not a signature, and
# is refused before the comparison (hmac.compare_digest raises TypeError for non-ASCII text).
HASH = re.compile(r"[0-9a-fA-F]{64}", re.ASCII)


class InitDataError(ValueError):
    """Why initData was refused (said in the server's log only: the client gets a plain 401)."""


@dataclass(frozen=True)
class WebAppUser:
    """Who opened the page, as Telegram signed it."""

    user_id: int
    first_name: str
    auth_date: int


def secret_key(bot_token: str) -> bytes:
    """The key the data-check string is signed with, for this bot."""
    return hmac.new(SECRET_LABEL, bot_token.encode(), hashlib.sha256).digest()


def data_check_string(fields: dict[str, str]) -> str:
    """Every field but `hash`, as sorted `key=value` lines."""
    return "\n".join(f"{key}={fields[key]}" for key in sorted(fields) if key != "hash")


def sign(fields: dict[str, str], bot_token: str) -> str:
    """The `hash` Telegram gives these fields for this bot (tests and the local stand-in sign with it)."""
    return hmac.new(secret_key(bot_token), data_check_string(fields).encode(), hashlib.sha256).hexdigest()


def parse_fields(raw: str) -> dict[str, str]:
    """The fields of an initData query string, decoded once; refuses repeated keys and malformed pairs."""
    if not raw or len(raw) > MAX_INIT_DATA_CHARS:
        raise InitDataError("initData is empty or too long")
    try:
        pairs = parse_qsl(raw, keep_blank_values=True, strict_parsing=True, errors="strict")
    except (ValueError, UnicodeDecodeError) as error:
        raise InitDataError(f"initData is not a query string: {error}") from None
    fields: dict[str, str] = {}
    for key, value in pairs:
        if key in fields:
            raise InitDataError(f"initData repeats {key!r}")
        fields[key] = value
    return fields


def check_init_data(raw: str, bot_token: str, now: int, max_age_seconds: int) -> WebAppUser:
    """The user `raw` (Telegram.WebApp.initData) was signed for, at `now` (epoch seconds); raises
    InitDataError when it is malformed, not signed with this bot's token, stale or from the future."""
    fields = parse_fields(raw)
    given = fields.get("hash", "")
    if HASH.fullmatch(given) is None:
        raise InitDataError("initData has no hash (64 hex digits)")
    if not hmac.compare_digest(sign(fields, bot_token), given.lower()):
        raise InitDataError("initData's hash does not match")
    try:
        auth_date = int(fields.get("auth_date", ""))
    except ValueError:
        raise InitDataError("initData has no auth_date") from None
    if auth_date > now + CLOCK_SKEW_SECONDS:
        raise InitDataError("initData's auth_date is in the future")
    if now - auth_date > max_age_seconds:
        raise InitDataError("initData is older than allowed")
    try:
        user = json.loads(fields.get("user", ""))
    except ValueError:
        raise InitDataError("initData's user is not JSON") from None
    if not isinstance(user, dict) or type(user.get("id")) is not int or user["id"] <= 0:
        raise InitDataError("initData's user has no id")
    name = user.get("first_name")
    return WebAppUser(user["id"], name if isinstance(name, str) else "", auth_date)
