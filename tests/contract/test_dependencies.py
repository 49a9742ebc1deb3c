"""The core package's dependency direction: handlers -> runtime -> states -> commands -> tools -> domain
packages -> foundations (adapters' building blocks, Telegram, ids, config). A package may import its own
layer and the layers below it, never one above: a store or the inbox that imported a state, a command or the
composition root would tie the bottom of the house to its top. Imports made only for type checking count
too: they are still knowledge of the layer above.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

CORE = Path(__file__).resolve().parents[2] / "layers" / "core" / "stepwise"

# Lowest first. Every package and top-level module of `stepwise` is in exactly one layer.
LAYERS: list[tuple[str, frozenset[str]]] = [
    (
        "foundations",
        frozenset(
            {"config", "dynamodb_pages", "events", "ids", "secrets", "telegram", "turn_ref", "workflow"}
        ),
    ),
    (
        "domain",
        frozenset(
            {
                "approvals",
                "audit",
                "chats",
                "history",
                "inbox",
                "ledger",
                "media",
                "memory",
                "model",
                "offline",
                "prompt",
                "reminders",
                "tasks",
                "turn_records",
                "usage",
            }
        ),
    ),
    ("tools", frozenset({"tools"})),
    ("commands", frozenset({"commands"})),
    ("states", frozenset({"states", "webhook"})),
    ("composition root", frozenset({"runtime"})),
    ("handler support", frozenset({"lambda_support"})),
]
RANK = {package: rank for rank, (_, packages) in enumerate(LAYERS) for package in packages}


def package_of(module: str) -> str | None:
    """`stepwise.inbox.sequencer` -> `inbox`; None outside the core package."""
    parts = module.split(".")
    return parts[1] if parts[0] == "stepwise" and len(parts) > 1 else None


def imported_modules(source: str) -> list[str]:
    """Every absolute module an import statement names (at any depth: lazy and TYPE_CHECKING imports too)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found += [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
    return found


def upward_imports(core: Path) -> list[str]:
    """`file: package (layer) imports package (layer)` for every import that points up."""
    problems = []
    for path in sorted(core.rglob("*.py")):
        relative = path.relative_to(core)
        own = relative.parts[0].removesuffix(".py")
        if own == "__init__":
            continue
        for module in imported_modules(path.read_text()):
            target = package_of(module)
            if target is None or target not in RANK or RANK[target] <= RANK[own]:
                continue
            problems.append(
                f"{relative}: {own} ({LAYERS[RANK[own]][0]}) imports {module} ({LAYERS[RANK[target]][0]})"
            )
    return sorted(set(problems))


def test_every_package_of_the_core_has_a_layer() -> None:
    packages = {p.name.removesuffix(".py") for p in CORE.iterdir() if p.suffix == ".py" or p.is_dir()}
    packages -= {"__init__", "__pycache__"}
    assert packages <= set(RANK), f"place these in LAYERS: {sorted(packages - set(RANK))}"


def test_no_package_imports_a_layer_above_its_own() -> None:
    assert upward_imports(CORE) == []


@pytest.mark.parametrize(
    ("package", "source"),
    [
        ("inbox", "from stepwise.states.contracts import TurnRef\n"),
        ("tasks", "def f():\n    from stepwise.runtime import get_runtime\n"),
        (
            "telegram",
            "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import stepwise.commands.table\n",
        ),
        ("tools", "from stepwise import commands\nfrom stepwise.commands import table\n"),
    ],
)
def test_the_check_finds_an_upward_import_wherever_it_is_written(
    tmp_path: Path, package: str, source: str
) -> None:
    (tmp_path / package).mkdir()
    (tmp_path / package / "bad.py").write_text(source)
    assert upward_imports(tmp_path) != []


def test_the_check_allows_imports_downward_and_within_a_layer(tmp_path: Path) -> None:
    (tmp_path / "states").mkdir()
    (tmp_path / "states" / "ok.py").write_text(
        "from stepwise.tools.registry import ToolRegistry\nfrom stepwise.webhook import handle\n"
        "from stepwise.inbox import sequencer\nimport stepwise.ids\n"
    )
    assert upward_imports(tmp_path) == []
