"""How outside MCP servers are reached (docs/mcp-client.md): read only where MCP_SERVERS_PARAMETER names
their list, by CallModel (the lists) and RunTools (the calls)."""

from typing import Annotated

from annotated_types import Interval, MinLen
from pydantic import field_validator

from stepwise.config import EnvSettings


class RemoteToolSettings(EnvSettings):
    """Where the servers' secrets and tool lists are kept, how often the lists are fetched again, and the
    limits of one call (time, result size, the breaker)."""

    mcp_parameters_path: str = "/stepwise/mcp/"
    remote_tools_table: Annotated[str, MinLen(1)] = "stepwise-remote-tools"
    remote_tools_refresh: bool = False  # CallModel's: fetch stale lists again (RunTools only reads them)
    remote_tools_refresh_seconds: Annotated[int, Interval(ge=60, le=604_800)] = 3600
    remote_tool_timeout_seconds: Annotated[float, Interval(gt=0, le=60)] = 12.0
    remote_result_max_chars: Annotated[int, Interval(ge=500, le=8000)] = 8000
    remote_breaker_failures: Annotated[int, Interval(ge=1, le=100)] = 3
    remote_breaker_seconds: Annotated[int, Interval(ge=10, le=86_400)] = 300

    @field_validator("mcp_parameters_path")
    @classmethod
    def _parameter_path(cls, value: str) -> str:
        if not (value.startswith("/") and value.endswith("/")):
            raise ValueError(f"MCP_PARAMETERS_PATH must start and end with /, got {value!r}")
        return value
