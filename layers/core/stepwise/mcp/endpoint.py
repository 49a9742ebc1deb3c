"""The `/mcp` endpoint: Stepwise's built-in tools for the user's own MCP clients, over the MCP SDK's
Streamable HTTP transport, stateless with JSON answers (each request is complete in itself, so any Lambda
container can answer it: no session, no stream).

A request passes the gate first (`stepwise.mcp.gate`: method, size, token, rate limit); then the SDK's
Starlette app, for the token's user only, answers it through Mangum (the ASGI adapter for Lambda). A call to
a tool that needs approval is handed to the user's chat (`stepwise.mcp.outside_calls`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from aws_lambda_powertools import Logger
from mangum import Mangum
from mcp.server.transport_security import TransportSecuritySettings

from stepwise.approvals.models import Requester
from stepwise.mcp.gate import GateLimits, HttpAnswer, admit
from stepwise.mcp.outside_calls import AskInTelegram
from stepwise.mcp.server import build_mcp_server
from stepwise.telegram.conversation import Conversation, Scope
from stepwise.tools.registry import ToolContext
from stepwise.turn.ids import iso_utc

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from datetime import datetime

    from aws_lambda_powertools.utilities.typing import LambdaContext

    from stepwise.audit.log import AuditLog
    from stepwise.connections.models import Connection
    from stepwise.connections.store import ConnectionStore
    from stepwise.inbox.sequencer import Sequencer
    from stepwise.tools.registry import ToolRegistry

# The service is named, not read from the environment at import: a child of an unnamed service would be
# orphaned (it cannot append keys) whenever this module is imported before POWERTOOLS_SERVICE_NAME is set.
logger = Logger(service="stepwise", child=True)

PATH = "/mcp"
# Bearer tokens, not cookies, authenticate every request: a page another site serves cannot send one, so the
# SDK's DNS-rebinding check (Host and Origin allowlists) is off; the Host is API Gateway's or 127.0.0.1's.
NO_HOST_CHECK = TransportSecuritySettings(enable_dns_rebinding_protection=False)


@dataclass
class EndpointServices:
    """What the endpoint needs: the tokens, the tools (built on first use), the audit log, the chats'
    sequencer (for calls that wait for approval), the limits, a clock and ids."""

    connections: ConnectionStore
    tools: Callable[[], ToolRegistry]
    audit: AuditLog
    sequencer: Callable[[], Sequencer]
    limits: GateLimits
    clock: Callable[[], datetime]
    new_id: Callable[[], str]


def serve(
    method: str,
    headers: Mapping[str, str],
    body: str,
    event: dict[str, Any],
    context: LambdaContext,  # Powertools' type; Mangum declares its own protocol of the same object
    services: EndpointServices,
) -> dict[str, Any]:
    """Answer one request (the API Gateway HTTP API event `event` and its Lambda `context`; `headers`
    lower-cased and `body` decoded from it), as API Gateway's proxy response."""
    try:
        admitted = admit(
            method, headers, len(body.encode()), services.connections, services.limits, services.clock()
        )
    except Exception:  # the tokens' table said no (throttled, down): nothing ran, the client may retry
        logger.exception("the MCP request could not be checked; answered 503")
        admitted = HttpAnswer(503, "temporarily unavailable, retry shortly", {"retry-after": "1"})
    if isinstance(admitted, HttpAnswer):
        return admitted.response()
    logger.append_keys(user_id=admitted.user_id, connection=admitted.name)
    server = build_mcp_server(
        services.tools(),
        lambda: _context(admitted, services),
        services.audit,
        AskInTelegram(admitted, services.sequencer, services.clock, services.new_id),
    )
    app = server.streamable_http_app(
        streamable_http_path=PATH,
        stateless_http=True,
        json_response=True,
        transport_security=NO_HOST_CHECK,
        max_request_body_size=services.limits.max_body_bytes,
    )
    response: dict[str, Any] = Mangum(app, lifespan="auto")(event, context)  # type: ignore[arg-type]
    logger.info("MCP request answered", extra={"status": response.get("statusCode")})
    return response


def _context(connection: Connection, services: EndpointServices) -> ToolContext:
    """A call's context: the connection's user in their private chat, a new call id (the ledger runs a call id
    once). A token acts on its owner's private data only (docs/groups.md): tokens are made in the private
    chat, and one naming a group would act in the owner's private chat all the same (and a call that waits
    for approval is asked there)."""
    return ToolContext(
        Scope(Conversation(connection.user_id), connection.user_id),
        turn_id=f"mcp-{connection.name}",
        call_id=f"mcp:{services.new_id()}",
        now=iso_utc(services.clock()),
        requester=Requester(kind="mcp_client", name=connection.name),
    )
