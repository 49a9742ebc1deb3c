"""The /mcp endpoint's limits (docs/mcp.md), read by the MCP function only."""

from typing import Annotated

from annotated_types import Interval

from stepwise.config import EnvSettings


class EndpointSettings(EnvSettings):
    """MCP_REQUESTS_PER_MINUTE (per token) and MCP_MAX_BODY_BYTES (per request)."""

    mcp_requests_per_minute: Annotated[int, Interval(ge=1, le=10_000)] = 60
    mcp_max_body_bytes: Annotated[int, Interval(ge=1024, le=10_485_760)] = 1_048_576
