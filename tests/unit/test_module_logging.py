"""The core's modules log through the standard library's logger named after the module. Their names start
with the service's (`POWERTOOLS_SERVICE_NAME=stepwise`), so their records go to the handler's Powertools
Logger, which writes them as structured JSON with the turn's keys; no Powertools child logger is built per
module on a cold start."""

from __future__ import annotations

import ast
import io
import json
import logging
from collections.abc import Iterator
from pathlib import Path

import pytest
from aws_lambda_powertools import Logger

from stepwise_local.template import Template

ROOT = Path(__file__).resolve().parents[2]
CORE = ROOT / "layers" / "core" / "stepwise"
# What Powertools sets on a logger it configured (a later Logger of the service then reuses it as it is).
POWERTOOLS_MARKS = ("init", "powertools_handler", "powertools_buffer_config", "powertools_buffer_cache")


@pytest.fixture
def service_logger() -> Iterator[tuple[Logger, io.StringIO]]:
    """The service's Logger writing to a stream. The `stepwise` logger is left as it was found: Powertools
    marks it configured, and other tests' Loggers of the service reuse it."""
    service = logging.getLogger("stepwise")
    saved = {**vars(service), "handlers": list(service.handlers), "filters": list(service.filters)}
    for mark in POWERTOOLS_MARKS:  # as a new container finds it, whatever other tests configured before
        vars(service).pop(mark, None)
    service.handlers = []
    stream = io.StringIO()
    yield Logger(service="stepwise", logger_handler=logging.StreamHandler(stream), level="INFO"), stream
    vars(service).clear()
    vars(service).update(saved)


def test_a_module_loggers_record_is_written_by_the_service_logger_with_the_turns_keys(
    service_logger: tuple[Logger, io.StringIO],
) -> None:
    # Given the handler's Logger, with the turn's keys appended
    logger, stream = service_logger
    logger.append_keys(turn_id="chat1-turn1", chat_id=1)
    # When a core module logs a warning with extra fields, and a debug line below the level
    module_logger = logging.getLogger("stepwise.states.spend")
    module_logger.warning("budget reached", extra={"used": 12})
    module_logger.debug("not shown")
    # Then one JSON line carries the service, the level, the turn's keys and the extra field
    lines = [json.loads(line) for line in stream.getvalue().splitlines()]
    assert len(lines) == 1
    assert lines[0]["message"] == "budget reached" and lines[0]["level"] == "WARNING"
    assert lines[0]["service"] == "stepwise" and lines[0]["turn_id"] == "chat1-turn1"
    assert lines[0]["used"] == 12


def test_every_function_runs_as_the_service_the_module_loggers_belong_to() -> None:
    functions = Template().functions().values()
    assert {spec.environment["POWERTOOLS_SERVICE_NAME"] for spec in functions} == {CORE.name}


def test_core_modules_build_no_powertools_logger_but_where_they_append_keys() -> None:
    builders = []
    for path in CORE.rglob("*.py"):
        source = path.read_text()
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "Logger":
                builders.append(path.relative_to(CORE).as_posix())
    # The /mcp endpoint appends its client's keys to the service logger through a child logger.
    assert sorted(set(builders)) == ["mcp/endpoint.py"]


def test_the_mcp_endpoints_child_logger_appends_to_the_service_logger_however_it_was_imported(
    service_logger: tuple[Logger, io.StringIO],
) -> None:
    # Given the endpoint module, imported here with no POWERTOOLS_SERVICE_NAME set (as a unit test imports it)
    from stepwise.mcp import endpoint

    _service, stream = service_logger
    # When the endpoint appends its client's keys and logs
    endpoint.logger.append_keys(user_id=42, connection="laptop")
    try:
        endpoint.logger.info("MCP request answered")
    finally:
        endpoint.logger.remove_keys(["user_id", "connection"])
    # Then the service's Logger writes the record with those keys (an orphaned child would have raised)
    (line,) = [json.loads(line) for line in stream.getvalue().splitlines()]
    assert line["service"] == "stepwise" and line["user_id"] == 42 and line["connection"] == "laptop"
