"""The sign-in callback (API Gateway HTTP API): `GET /oauth/callback`, where a person's browser comes back
from an outside MCP server's sign-in page (docs/accounts.md). Its query holds the authorization code: this
function never logs its event."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from aws_lambda_powertools import Logger

from stepwise.accounts.callback import finish_callback
from stepwise.aws.events import HttpCall
from stepwise.runtime import get_runtime

if TYPE_CHECKING:
    from aws_lambda_powertools.utilities.typing import LambdaContext

logger = Logger()


@logger.inject_lambda_context(clear_state=True)
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    """Finish the sign-in the query's state started; see stepwise.accounts.callback."""
    request = HttpCall.model_validate(event)
    return finish_callback(request.raw_query_string, lambda: get_runtime().callback_services).response()
