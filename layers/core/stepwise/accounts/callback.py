"""The sign-in callback, `GET /oauth/callback` (docs/accounts.md): where a person's browser comes back from an
outside server's sign-in page with the authorization response (`state` and `code`, or `state` and `error`).

The flow uses the state up and exchanges the code (`AccountFlow.finish_sign_in`). The browser gets a small
HTML page: 200 "Connected <name>. You can close this page." or 400 saying what happened, with nothing kept;
the person gets one line in their private chat (for an unknown state there is nobody to tell). Nothing here
logs the query: it holds the code.
"""

from __future__ import annotations

import html
import logging
from typing import TYPE_CHECKING, Any, NamedTuple
from urllib.parse import parse_qs

from stepwise.accounts.models import Account

if TYPE_CHECKING:
    from collections.abc import Callable

    from stepwise.accounts.flow import AccountFlow
    from stepwise.telegram.client import TelegramClient

logger = logging.getLogger(__name__)

HEADERS = {
    "Content-Type": "text/html; charset=utf-8",
    "Cache-Control": "no-store",
    "Referrer-Policy": "no-referrer",  # the page's URL holds the code: no link from it may carry it away
    "X-Content-Type-Options": "nosniff",
    "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'",
}
FAILED = "Something went wrong on Stepwise's side, and nothing was kept. Send /accounts to try again."


class CallbackServices(NamedTuple):
    """What the callback reaches: the accounts' flow, and the Bot API (to tell the person)."""

    flow: Callable[[], AccountFlow]
    telegram: Callable[[], TelegramClient]


class CallbackPage(NamedTuple):
    """The browser's answer: its status and its page."""

    status: int
    html: str

    def response(self) -> dict[str, Any]:
        """As API Gateway's HTTP API takes a Lambda proxy response."""
        return {"statusCode": self.status, "headers": dict(HEADERS), "body": self.html}


def finish_callback(query: str, services: Callable[[], CallbackServices]) -> CallbackPage:
    """Finish the sign-in the query's state started: keep the account and tell the person, or say what
    happened. `query` is the URL's raw query string."""
    fields = parse_qs(query, keep_blank_values=True)

    def first(name: str) -> str | None:
        values = fields.get(name)
        return values[0] if values else None

    try:
        callback = services()
        finished = callback.flow().finish_sign_in(first("state"), first("code"), first("error"))
    except Exception as error:  # the page says so; the log names the error's type alone (never the query)
        logger.error(f"the sign-in callback failed ({type(error).__name__})")
        return CallbackPage(500, _page("Not connected", FAILED))
    if isinstance(finished, Account):
        _tell(callback, finished.user_id, f"Connected {finished.server}.")
        return CallbackPage(200, _page("Connected", f"Connected {finished.server}. You can close this page."))
    logger.info(f"a sign-in callback kept nothing ({finished.kind})")
    if finished.user_id is not None:
        _tell(callback, finished.user_id, f"Not connected: {finished.reason} /accounts shows your accounts.")
    return CallbackPage(400, _page("Not connected", f"Not connected. {finished.reason}"))


def _tell(services: CallbackServices, user_id: int, text: str) -> None:
    """One line in the person's private chat (its id is theirs); the page is answered whatever happens."""
    try:
        services.telegram().send_message(user_id, text)
    except Exception as error:
        logger.warning(f"telling user {user_id} about their sign-in failed ({type(error).__name__})")


def _page(title: str, message: str) -> str:
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{html.escape(title)} · Stepwise</title>"
        "<style>body{font:1.1rem/1.5 system-ui,sans-serif;max-width:32rem;margin:3rem auto;padding:0 1rem}"
        "</style></head>\n"
        f"<body><p>{html.escape(message)}</p></body></html>\n"
    )
