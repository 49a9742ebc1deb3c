"""The Mini App's routes on the HTTP API: `GET /app` (the page), `GET /app/api/state` (everything it shows, in
one answer) and `POST /app/api/action` (one tap). The API's requests pass the gate first
(`stepwise.miniapp.gate`: Telegram's signed initData, the allowlist, the rate limit)."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from stepwise.miniapp.actions import act
from stepwise.miniapp.gate import HttpAnswer, admit, refusal
from stepwise.miniapp.snapshot import snapshot

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from stepwise.miniapp.page import Page
    from stepwise.miniapp.services import AppServices

logger = logging.getLogger(__name__)

PAGE = "/app"
STATE = "/app/api/state"
ACTION = "/app/api/action"
ROUTES = {PAGE: "GET", STATE: "GET", ACTION: "POST"}


def serve(
    method: str,
    path: str,
    headers: Mapping[str, str],
    body: str,
    page: Page,
    services: Callable[[], AppServices],
) -> dict[str, object]:
    """Answer one request (`headers` lower-cased) as API Gateway's proxy response: `page` to GET /app, the
    API's answers with `services` (built on the first API request)."""
    expected = ROUTES.get(path.rstrip("/") or path)
    if expected is None:
        return refusal(404, "not found").response()
    if method.upper() != expected:
        return refusal(405, "method not allowed", {"allow": expected}).response()
    if path.rstrip("/") == PAGE:
        return page.response()
    return _api(path.rstrip("/"), headers, body, services()).response()


def _api(path: str, headers: Mapping[str, str], body: str, services: AppServices) -> HttpAnswer:
    try:
        admitted = admit(
            headers, len(body.encode()), services.bot_token, services.count, services.limits, services.clock()
        )
    except Exception:  # the rate counter's table said no (throttled, down): nothing ran, the page may retry
        logger.exception("the Mini App request could not be checked; answered 503")
        return refusal(503, "temporarily unavailable, retry shortly", {"retry-after": "1"})
    if isinstance(admitted, HttpAnswer):
        return admitted
    try:
        if path == STATE:
            return HttpAnswer(200, snapshot(admitted, services))

        answer = act(admitted, body, services)
    except Exception:  # a store or Telegram said no: the page says so, and a tap may be tried again
        logger.exception("a Mini App request failed; answered 503", extra={"user_id": admitted.user_id})
        return refusal(503, "something went wrong on our side: try again in a moment", {"retry-after": "1"})
    logger.info("Mini App action", extra={"user_id": admitted.user_id, "status": answer.status})
    return answer
