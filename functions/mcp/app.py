"""The /mcp endpoint (API Gateway HTTP API): Stepwise's tools for the user's own MCP clients, with the bearer
tokens /connect makes. Importing this handler imports the MCP SDK; no other function does."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from aws_lambda_powertools import Logger

from stepwise.aws.events import HttpCall
from stepwise.mcp.endpoint import serve
from stepwise.runtime import get_runtime

if TYPE_CHECKING:
    from aws_lambda_powertools.utilities.typing import LambdaContext

logger = Logger()


@logger.inject_lambda_context(clear_state=True)
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    """Answer one MCP request (JSON-RPC over Streamable HTTP, stateless); see stepwise.mcp.endpoint."""
    request = HttpCall.model_validate(event)
    return serve(
        request.method,
        request.lower_headers(),
        request.text_body(),
        event,
        context,
        get_runtime().mcp_endpoint_services,
    )
