"""The offline model's phrase corpora, `stepwise/offline/corpora/*.toml`, as the corpus tests read them."""

from __future__ import annotations

import tomllib
from typing import Any

from support.tools import ROOT

CORPORA = ROOT / "layers" / "core" / "stepwise" / "offline" / "corpora"

Call = tuple[str, dict[str, Any]]


def corpus(name: str) -> dict[str, Any]:
    """The corpus file `name`.toml."""
    return tomllib.loads((CORPORA / f"{name}.toml").read_text(encoding="utf-8"))


def with_calls(entries: list[dict[str, Any]]) -> list[tuple[str, list[Call]]]:
    """Entries `{ text = "…", calls = [[tool, input], …] }` as (text, calls) pairs."""
    return [(entry["text"], [(name, args) for name, args in entry["calls"]]) for entry in entries]
