"""How outside MCP servers are reached (docs/mcp-client.md): read only where MCP_SERVERS_PARAMETER names
their list, by CallModel (the lists) and RunTools (the calls)."""

from typing import Annotated, Self

from annotated_types import Interval, MinLen
from pydantic import field_validator, model_validator

from stepwise.config import EnvSettings, split_list


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
    # The secrets' own SSM parameters (comma-separated; the template names them all): the functions may read
    # everything under MCP_PARAMETERS_PATH, and a server's token is sent to that server, so the path must
    # cover none of them.
    secret_parameters: str = ""

    @field_validator("mcp_parameters_path")
    @classmethod
    def _parameter_path(cls, value: str) -> str:
        if not (value.startswith("/") and value.endswith("/")):
            raise ValueError(f"MCP_PARAMETERS_PATH must start and end with /, got {value!r}")
        if not value.strip("/") or "//" in value:
            # "/" would let CallModel and RunTools read every parameter of the account (the bot token too).
            raise ValueError(
                f"MCP_PARAMETERS_PATH must name at least one folder, such as /stepwise/mcp/, got {value!r}"
            )
        return value

    @model_validator(mode="after")
    def _keeps_off_the_secrets(self) -> Self:
        for name in split_list(self.secret_parameters):
            if name.startswith(self.mcp_parameters_path):
                raise ValueError(
                    f"MCP_PARAMETERS_PATH {self.mcp_parameters_path} covers the secret parameter {name}: "
                    "outside servers' tokens are read from that path, so it must hold nothing else "
                    "(use a folder of its own, such as /stepwise/mcp/)"
                )
        return self
