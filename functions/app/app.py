"""The Mini App (API Gateway HTTP API): `GET /app`, the page Telegram opens inside the chat, and its JSON API,
signed in by Telegram's initData (docs/app.md). Only this function imports `stepwise.miniapp`."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from aws_lambda_powertools import Logger

from stepwise.aws.events import HttpCall
from stepwise.miniapp.endpoint import serve
from stepwise.miniapp.page import build_page
from stepwise.runtime import get_runtime

if TYPE_CHECKING:
    from aws_lambda_powertools.utilities.typing import LambdaContext

logger = Logger()
PAGE = build_page(Path(__file__).parent / "page")  # the page's files, read once per container


@logger.inject_lambda_context(clear_state=True)
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    """Answer one request to the page or its API; see stepwise.miniapp.endpoint."""
    request = HttpCall.model_validate(event)
    return serve(
        request.method,
        request.path,
        request.lower_headers(),
        request.text_body(),
        PAGE,
        lambda: get_runtime().app_services,
    )
