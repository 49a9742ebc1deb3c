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
    # Each tool's annotations as first seen, or as the owner last accepted them (remote_tools.labels); "": not
    # pinned yet (a record written before labels were pinned).
    pinned_json: str = ""
    noticed_json: str = "[]"  # the label changes already logged, so each is logged once

    def tools(self) -> list[dict[str, Any]]:
        loaded = json.loads(self.tools_json)
        return [tool for tool in loaded if isinstance(tool, dict)] if isinstance(loaded, list) else []

    def pinned(self) -> dict[str, dict[str, Any]] | None:
        """The pinned labels by tool name; None when none were pinned yet."""
        if not self.pinned_json:
            return None
        loaded = json.loads(self.pinned_json)
        if not isinstance(loaded, dict):
            return None
        return {str(name): dict(value) for name, value in loaded.items() if isinstance(value, dict)}

    def noticed(self) -> list[str]:
        loaded = json.loads(self.noticed_json or "[]")
        return [str(line) for line in loaded] if isinstance(loaded, list) else []

    def skipped(self, now: int) -> bool:
        """Whether the breaker is open: the server failed too often; it is left alone until then."""
        return self.skipped_until > now


def canonical_tools(tools: Sequence[dict[str, Any]]) -> str:
    """A tool list as stored: sorted by name, keys sorted, no whitespace."""
    ordered = sorted(tools, key=lambda tool: str(tool.get("name", "")))
    return json.dumps(ordered, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


class RemoteToolCache(Protocol):
    """The servers' records. Implementations: DynamoDB (with TTL), and in memory for tests."""

    def get_many(self, servers: Sequence[str], *, consistent: bool = False) -> dict[str, ServerRecord]:
        """The records of these servers that exist (one request); `consistent`: a strongly consistent read,
        which sees every write made before it."""
        ...

    def put_tools(
        self,
        server: str,
        config_hash: str,
        tools_json: str,
        fetched_at: int,
        labels_json: str = "",
        *,
        accepted: bool = False,
    ) -> ServerRecord:
        """Keep a freshly fetched list; the server answered, so its failures are forgotten. `labels_json`
        becomes the pinned labels only where none are pinned yet (first seen), or when the owner `accepted`
        them ("": nothing to pin)."""
        ...

    def note_changes(self, server: str, seen_json: str, noticed_json: str) -> bool:
        """Keep `noticed_json` as the label changes logged, if the record still holds `seen_json`: True when
        this call changed it (its caller logs the new changes; another container that raced it does not)."""
        ...

    def record_failure(self, server: str, now: int, threshold: int, skip_seconds: int) -> ServerRecord:
        """Count one more failure in a row; at `threshold`, skip the server until `now + skip_seconds`."""
        ...

    def record_success(self, server: str) -> None:
        """The server answered: its failures in a row start again from zero."""
        ...
