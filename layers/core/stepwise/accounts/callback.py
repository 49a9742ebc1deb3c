"""`GET /oauth/callback`: where a person's browser comes back from an OAuth server's sign-in. The sign-in is
finished (`AccountFlow.finish_sign_in`: its state used up, the code exchanged, the tokens kept), the browser
gets a small HTML page saying what happened, and the person one line in their private chat.

`answer_callback(query, flow, tell)` is the answer, with the flow and a way to tell the person handed in by
whoever serves the route: the callback's Lambda (with its runtime's), or the local HTTP server of `make chat`
(`stepwise_local.mcp_http`, in the webhook's environment until the template has the callback's function).
"""

from __future__ import annotations

import html
import logging
from typing import TYPE_CHECKING

from stepwise.accounts.flow import SignInFailed

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from stepwise.accounts.flow import AccountFlow

logger = logging.getLogger(__name__)

TITLE = "Stepwise"


def answer_callback(
    query: Mapping[str, str], flow: AccountFlow, tell: Callable[[int, str], object]
) -> tuple[int, str]:
    """(status, HTML) for one callback (its query's `state`, `code`, `error`); `tell(user_id, line)` says the
    outcome in the person's chat (for a callback whose state was known)."""
    finished = flow.finish_sign_in(query.get("state"), query.get("code"), query.get("error"))
    if isinstance(finished, SignInFailed):
        if finished.user_id is not None:
            _tell(tell, finished.user_id, f"Couldn't connect {finished.server}: {finished.reason}")
        return 400, page(finished.reason)
    _tell(tell, finished.user_id, f"Connected {finished.server}.")
    return 200, page(f"Connected {finished.server}. You can close this page.")


def _tell(tell: Callable[[int, str], object], user_id: int, line: str) -> None:
    try:
        tell(user_id, line)
    except Exception:  # the sign-in is finished (or refused) either way; the page says so
        logger.exception(f"could not tell user {user_id} how their sign-in went")


def page(text: str) -> str:
    """The small HTML page the browser shows."""
    return (
        '<!doctype html>\n<html lang="en">\n<head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{TITLE}</title></head>\n<body><main><p>{html.escape(text)}</p></main></body>\n</html>\n"
    )
