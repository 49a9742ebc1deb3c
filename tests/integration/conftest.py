"""One local stack for the integration tests: moto runs the real ASL, fakes speak real HTTP on 127.0.0.1."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from support.mcp_servers import TimeServer
from support.stack import ALLOWED_USERS, Stack, clock_kept, fresh

from stepwise_local.anthropic_server import FakeAnthropic
from stepwise_local.emulation import Emulation, LocalConfig
from stepwise_local.telegram_server import FakeBotApi

BOT_TOKEN = "123456:integration-token"
MCP_SERVERS = "/stepwise/mcp/servers"  # the outside MCP servers list: empty unless a test lists some


@pytest.fixture(scope="session")
def running_stack() -> Iterator[Stack]:
    with FakeBotApi(BOT_TOKEN) as telegram, FakeAnthropic() as anthropic:
        config = LocalConfig(
            telegram_base_url=telegram.base_url,
            bot_token=BOT_TOKEN,
            anthropic_api_key=anthropic.api_key,
            anthropic_base_url=anthropic.base_url,
            parameters={
                "AllowedUserIds": ",".join(map(str, ALLOWED_USERS)),
                "LogLevel": "WARNING",
                "McpServersParameter": MCP_SERVERS,
            },
            ssm_parameters={MCP_SERVERS: "[]"},
            retry_time_scale=0.001,
        )
        with Emulation(config) as emulation:
            yield Stack(emulation, telegram, anthropic)


@pytest.fixture(scope="session")
def time_server() -> Iterator[TimeServer]:
    """The MCP project's reference time server (mcp-server-time, from the package index) on 127.0.0.1."""
    with TimeServer() as server:
        yield server


@pytest.fixture
def stack(running_stack: Stack) -> Iterator[Stack]:
    """The shared stack, with the model's script and requests and the environment overrides fresh per test."""
    with fresh(running_stack) as stack:
        yield stack


@pytest.fixture
def clock_stack(stack: Stack) -> Iterator[Stack]:
    """The shared stack; its clock goes back and this test's schedules go away afterwards."""
    with clock_kept(stack):
        yield stack
