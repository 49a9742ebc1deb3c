"""One local stack for the integration tests: moto runs the real ASL, fakes speak real HTTP on 127.0.0.1."""

from __future__ import annotations

from collections.abc import Iterator

import boto3
import pytest
from support.mcp_servers import TimeServer
from support.stack import ALLOWED_USERS, Stack

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
    running_stack.anthropic.reset()
    running_stack.emulation.config.env.clear()
    running_stack.emulation.clear_crashes()
    running_stack.telegram.clear_faults()
    yield running_stack
    running_stack.emulation.config.env.clear()
    running_stack.emulation.clear_crashes()
    running_stack.telegram.clear_faults()


@pytest.fixture
def clock_stack(stack: Stack, monkeypatch: pytest.MonkeyPatch) -> Iterator[Stack]:
    """The shared stack; its clock goes back and this test's schedules go away afterwards."""
    monkeypatch.setattr(stack.emulation, "_clock_offset", stack.emulation._clock_offset)
    yield stack
    client = boto3.client("scheduler")
    group = stack.emulation.template.schedule_group_name("ReminderScheduleGroup")
    for schedule in client.list_schedules(GroupName=group)["Schedules"]:
        client.delete_schedule(Name=schedule["Name"], GroupName=group)
