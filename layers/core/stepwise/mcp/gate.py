"""What a request to `/mcp` passes before the MCP SDK sees it: the method, the body's size, the bearer token
and the token's rate limit. A refused request gets a plain HTTP answer that says nothing about tokens or
users beyond "unauthorized". Nothing here imports the SDK.
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from stepwise.connections.models import TOKEN_PREFIX, token_hash

if TYPE_CHECKING:
    from collections.abc import Mapping
    from datetime import datetime

    from stepwise.connections.models import Connection
    from stepwise.connections.store import ConnectionStore

logger = logging.getLogger(__name__)

REALM = 'Bearer realm="stepwise"'
# What /connect makes (stepwise.connections.minting): anything else is refused before any read.
TOKEN_SHAPE = re.compile(rf"^{re.escape(TOKEN_PREFIX)}[0-9a-f]{{64}}$")


class RefusalLog:
    """Unknown tokens logged at most once a minute per container, with how many were refused since: a
    flood of them must not cost a log line each."""

    def __init__(self) -> None:
        self.minute = -1
        self.count = 0

    def refused(self, epoch: int) -> None:
        self.count += 1
        if epoch // 60 == self.minute:
            return
        logger.info("MCP requests with an unknown token refused", extra={"refused": self.count})
        self.minute, self.count = epoch // 60, 0


REFUSALS = RefusalLog()


@dataclass(frozen=True)
class HttpAnswer:
    """A plain HTTP answer (API Gateway's proxy response)."""

    status: int
    error: str
    headers: dict[str, str] = field(default_factory=dict)

    def response(self) -> dict[str, object]:
        return {
            "statusCode": self.status,
            "headers": {"content-type": "application/json", **self.headers},
            "body": json.dumps({"error": self.error}),
        }


@dataclass(frozen=True)
class GateLimits:
    """The body's size limit, a token's requests per minute, and who may be served (ALLOWED_USER_IDS: a
    token of a user taken off the allowlist stops working)."""

    max_body_bytes: int = 1_048_576
    requests_per_minute: int = 60
    allowed_users: frozenset[int] = frozenset()


def admit(
    method: str,
    headers: Mapping[str, str],
    body_bytes: int,
    connections: ConnectionStore,
    limits: GateLimits,
    now: datetime,
) -> Connection | HttpAnswer:
    """The connection a request acts for, or the answer that refuses it: 405 for anything but POST (the
    endpoint is stateless: no GET stream, no session to DELETE), 413 for a body over the limit, 401 with
    `WWW-Authenticate` for a missing, unknown or revoked token (or a token of a user no longer allowed), 429
    with `Retry-After` past the token's requests per minute. `headers` are lower-cased. A request with an
    unknown token costs at most one small read (the token's item, by its hash), none when it is not shaped
    like a token at all, and no write."""
    if method.upper() != "POST":
        return HttpAnswer(405, "method not allowed: this endpoint takes POST only", {"allow": "POST"})
    if body_bytes > limits.max_body_bytes:
        return HttpAnswer(413, f"request body over {limits.max_body_bytes} bytes")
    scheme, _, token = headers.get("authorization", "").strip().partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        return HttpAnswer(401, "unauthorized", {"www-authenticate": REALM})
    epoch = int(now.timestamp())
    token = token.strip()
    connection = connections.find(token_hash(token)) if TOKEN_SHAPE.match(token) else None
    if connection is None or connection.user_id not in limits.allowed_users:
        REFUSALS.refused(epoch)
        return HttpAnswer(401, "unauthorized", {"www-authenticate": f'{REALM}, error="invalid_token"'})
    digest = token_hash(token)
    if not connections.count_request(digest, epoch // 60, limits.requests_per_minute):
        logger.info("MCP request over the rate limit", extra={"connection": connection.name})
        retry_after = str(60 - epoch % 60)
        return HttpAnswer(429, "too many requests", {"retry-after": retry_after})
    return connection
