"""Outside tools' labels (MCP tool annotations: `readOnlyHint`, `destructiveHint`...) are the server's
word, and the `writes` policy skips the tap for a tool labelled read-only. So each server's labels are pinned
as first seen (its first listing, or the listing the owner last accepted): a label is trusted only where the
pinned and the current labels agree, and a tool that was not there asks for the tap. Each change is logged
once, with how the owner accepts the server's current labels: their hash in its entry (`accept_labels`, see
docs/mcp-client.md)."""

from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence

Labels = dict[str, dict[str, Any]]  # tool name -> its annotations


def labels_of(tools: Sequence[dict[str, Any]]) -> Labels:
    """Each listed tool's annotations (an empty dict for a tool without any)."""
    labels: Labels = {}
    for tool in tools:
        annotations = tool.get("annotations")
        labels[str(tool.get("name", ""))] = dict(annotations) if isinstance(annotations, dict) else {}
    return labels


def canonical_labels(labels: Mapping[str, dict[str, Any]]) -> str:
    """Labels as stored and hashed: keys sorted, no whitespace."""
    return json.dumps(labels, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def labels_hash(labels: Mapping[str, dict[str, Any]]) -> str:
    """What the owner puts in a server's `accept_labels` to accept these labels (12 hex digits)."""
    return hashlib.sha256(canonical_labels(labels).encode()).hexdigest()[:12]


def label_changes(pinned: Mapping[str, dict[str, Any]], current: Labels, offered: Iterable[str]) -> list[str]:
    """One line per offered tool that is new or whose labels differ from the pinned ones, sorted."""
    changes = []
    for name in sorted(offered):
        now = current.get(name, {})
        if name not in pinned:
            changes.append(f"tool {name!r} is new (labels {canonical_labels(now)})")
        elif pinned[name] != now:
            before = canonical_labels(pinned[name])
            changes.append(f"tool {name!r} changed its labels from {before} to {canonical_labels(now)}")
    return changes
