"""The servers list and the servers' tokens, read from SSM with Powertools Parameters (decrypted, cached)."""

from __future__ import annotations

import logging
import re
from typing import TYPE_CHECKING

from aws_lambda_powertools.utilities import parameters

from stepwise.remote_tools.client import RemoteCallError
from stepwise.remote_tools.config import parse_servers

if TYPE_CHECKING:
    from stepwise.remote_tools.config import ServerEntry

logger = logging.getLogger(__name__)

HEADER = re.compile(r"^([A-Za-z0-9-]+):\s*(\S.*)$")


def load_servers(
    parameter: str, parameters_path: str, cache_seconds: int, *, force: bool = False
) -> tuple[ServerEntry, ...]:
    """The valid entries of the servers list; none (after one log line) when it cannot be read. `force`: read
    from SSM now, past the cache (which then keeps this value)."""
    if not parameter.startswith(parameters_path):
        logger.warning(
            f"MCP servers parameter {parameter} is not under {parameters_path} (McpParametersPath), which "
            "the functions may read; no outside tools are offered"
        )
        return ()

    try:
        document = parameters.get_parameter(parameter, decrypt=True, max_age=cache_seconds, force_fetch=force)
    except Exception as error:
        logger.warning(f"MCP servers parameter {parameter} could not be read ({error}); no outside tools")
        return ()
    return parse_servers(str(document), parameters_path)


def headers_for(entry: ServerEntry, cache_seconds: int) -> dict[str, str]:
    """The headers that authenticate to the server: `Authorization: Bearer <token>`, or the header the
    parameter names (`X-Api-Key: ...`); none without a token parameter."""
    if entry.token_parameter is None:
        return {}

    try:
        value = str(
            parameters.get_parameter(entry.token_parameter, decrypt=True, max_age=cache_seconds)
        ).strip()
    except Exception as error:
        raise RemoteCallError(
            f"its token parameter {entry.token_parameter} could not be read ({type(error).__name__})",
            counts=False,
        ) from None
    return token_headers(value)


def token_headers(value: str) -> dict[str, str]:
    """A token parameter's value as headers."""
    if match := HEADER.match(value):
        return {match.group(1): match.group(2).strip()}
    if value.lower().startswith("bearer "):
        return {"Authorization": value}
    return {"Authorization": f"Bearer {value}"}
