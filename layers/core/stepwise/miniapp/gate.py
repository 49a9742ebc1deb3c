"""What a request to the Mini App's API passes before it reads or changes anything: the body's size,
Telegram's signed `initData` (`Authorization: tma <initData>`), the allowlist and the user's rate limit. A
refused request gets a plain answer that says nothing about anyone's data.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from stepwise.miniapp.init_data import InitDataError, WebAppUser, check_init_data

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from datetime import datetime

logger = logging.getLogger(__name__)

REALM = 'tma realm="stepwise"'
# The API's answers: never cached, never sniffed, never sent to another origin (no CORS headers at all).
API_HEADERS = {
    "content-type": "application/json",
    "cache-control": "no-store",
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
}

type RateCounter = Callable[[str, int, int], bool]
"""Count one request under a key in a window (the epoch minute); False when the window is full."""


@dataclass(frozen=True)
class HttpAnswer:
    """A plain HTTP answer (API Gateway's proxy response) with a JSON body."""

    status: int
    body: object
    headers: dict[str, str] = field(default_factory=dict)

    def response(self) -> dict[str, object]:
        return {
            "statusCode": self.status,
            "headers": {**API_HEADERS, **self.headers},
            "body": json.dumps(self.body, separators=(",", ":")),
        }


def refusal(status: int, error: str, headers: dict[str, str] | None = None) -> HttpAnswer:
    return HttpAnswer(status, {"error": error}, headers or {})


@dataclass(frozen=True)
class AppLimits:
    """The body's size limit, a user's API requests per minute, how old initData may be, who may use it."""

    requests_per_minute: int = 60
    max_body_bytes: int = 16_384
    max_age_seconds: int = 3600
    allowed_users: frozenset[int] = frozenset()


def admit(
    headers: Mapping[str, str],
    body_bytes: int,
    bot_token: Callable[[], str],
    count: RateCounter,
    limits: AppLimits,
    now: datetime,
) -> WebAppUser | HttpAnswer:
    """The user a request acts for, or the answer that refuses it: 413 for a body over the limit, 401 with
    `WWW-Authenticate` for missing, malformed, forged, stale or future initData, 403 for a user off the
    allowlist, 429 with `Retry-After` past the user's requests per minute. `headers` are lower-cased."""
    if body_bytes > limits.max_body_bytes:
        return refusal(413, f"request body over {limits.max_body_bytes} bytes")
    scheme, _, raw = headers.get("authorization", "").strip().partition(" ")
    if scheme.lower() != "tma" or not raw.strip():
        return refusal(401, "unauthorized", {"www-authenticate": REALM})
    epoch = int(now.timestamp())
    try:
        user = check_init_data(raw.strip(), bot_token(), epoch, limits.max_age_seconds)
    except InitDataError as error:
        logger.info("Mini App request refused", extra={"why": str(error)})
        return refusal(401, "unauthorized", {"www-authenticate": f'{REALM}, error="invalid_token"'})
    if user.user_id not in limits.allowed_users:
        logger.info("Mini App request of a user off the allowlist", extra={"user_id": user.user_id})
        return refusal(403, "forbidden")
    if not count(f"app-user-{user.user_id}", epoch // 60, limits.requests_per_minute):
        logger.info("Mini App request over the rate limit", extra={"user_id": user.user_id})
        return refusal(429, "too many requests", {"retry-after": str(60 - epoch % 60)})
    return user
