"""What is kept per outside server (RemoteToolsTable): its fetched tool list and its circuit breaker."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Protocol

from pydantic import BaseModel, ConfigDict

if TYPE_CHECKING:
    from collections.abc import Sequence


class ServerRecord(BaseModel):
    """A server's cached `tools/list` (canonical JSON: the same bytes every turn, so the prompt prefix
    stays cacheable), when it was fetched and for which entry (`config_hash`), and the breaker's state:
    failures in a row, and until when the server is skipped (epoch seconds)."""

    model_config = ConfigDict(defer_build=True)

    server: str
    config_hash: str = ""
    tools_json: str = "[]"
    fetched_at: int = 0
    failures: int = 0
    skipped_until: int = 0

    def tools(self) -> list[dict[str, Any]]:
        loaded = json.loads(self.tools_json)
        return [tool for tool in loaded if isinstance(tool, dict)] if isinstance(loaded, list) else []

    def skipped(self, now: int) -> bool:
        """Whether the breaker is open: the server failed too often; it is left alone until then."""
        return self.skipped_until > now


def canonical_tools(tools: Sequence[dict[str, Any]]) -> str:
    """A tool list as stored: sorted by name, keys sorted, no whitespace."""
    ordered = sorted(tools, key=lambda tool: str(tool.get("name", "")))
    return json.dumps(ordered, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


class RemoteToolCache(Protocol):
    """The servers' records. Implementations: DynamoDB (with TTL), and in memory for tests."""

    def get_many(self, servers: Sequence[str]) -> dict[str, ServerRecord]:
        """The records of these servers that exist (one request)."""
        ...

    def put_tools(self, server: str, config_hash: str, tools_json: str, fetched_at: int) -> ServerRecord:
        """Keep a freshly fetched list; the server answered, so its failures are forgotten."""
        ...

    def record_failure(self, server: str, now: int, threshold: int, skip_seconds: int) -> ServerRecord:
        """Count one more failure in a row; at `threshold`, skip the server until `now + skip_seconds`."""
        ...

    def record_success(self, server: str) -> None:
        """The server answered: its failures in a row start again from zero."""
        ...
