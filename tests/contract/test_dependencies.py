"""The core package's dependency direction: handlers -> runtime -> states -> commands -> the turn's
services (`stepwise.services`) -> the MCP server -> tools -> domain packages -> foundations (the AWS plumbing,
Telegram, the turn's identity, warm-ups, config). A package may import its own layer and the layers below it,
never one above: a store or the inbox that imported a state, a command or the composition root would tie the
bottom of the house to its top. Imports made only for type checking count too: they are still knowledge of the
layer above.

No module imports itself through others (an import cycle, even a lazy one inside a function), and code
outside the offline model reaches it through its one entry point, `stepwise.offline.api`.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CORE = ROOT / "layers" / "core" / "stepwise"
LOCAL = ROOT / "stepwise_local"
OFFLINE_ENTRY = "stepwise.offline.api"
# Where code that uses the offline model lives (the offline package itself excepted).
OFFLINE_USERS = ("layers", "functions", "stepwise_local", "tests", "benchmarks", "scripts")

# Lowest first. Every package and top-level module of `stepwise` is in exactly one layer.
LAYERS: list[tuple[str, frozenset[str]]] = [
    (
        "foundations",
        frozenset(
            {
                "aws",  # Lambda events, boto3 clients, DynamoDB tables and paging, HTTP, secrets
                "config",
                "record",  # the small immutable value class of the cold path's records
                "telegram",
                "turn",  # what names a turn, its execution's input and its start, ids and timestamps
                "warmups",
            }
        ),
    ),
    (
        "domain",
        frozenset(
            {
                "approvals",
                "audit",
                "chats",
                "connections",
                "history",
                "inbox",
                "jobs",
                "ledger",
                "media",
                "memory",
                "model",
                "offline",
                "prompt",
                "reminders",
                "secretary",
                "skills",
                "tasks",
                "turn_records",
                "usage",
                "voice",  # voice notes' transcribers and speakers (imported by voice turns only)
            }
        ),
    ),
    # remote_tools: outside MCP servers' tools; accounts: people's own sign-ins to them (OAuth, sealed tokens)
    ("tools", frozenset({"tools", "remote_tools", "accounts"})),
    # The MCP server of the tools and its /mcp endpoint (the only package that imports the MCP SDK).
    ("MCP", frozenset({"mcp"})),
    # The Mini App's page and API (imported by its own function only).
    ("Mini App", frozenset({"miniapp"})),
    # What a turn's states and commands use, in narrow groups (built by the composition root).
    ("turn services", frozenset({"services"})),
    ("commands", frozenset({"commands"})),
    ("states", frozenset({"states", "webhook"})),
    ("composition root", frozenset({"runtime"})),
    ("handler support", frozenset({"lambda_support"})),
    # Lambda's entry point: it imports the function's app (outside the core package), nothing of the core.
    ("entry point", frozenset({"lambda_entry"})),
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
        "from stepwise.inbox import sequencer\nimport stepwise.turn.ids\n"
    )
    assert upward_imports(tmp_path) == []


def module_names(packages: tuple[Path, ...]) -> dict[str, Path]:
    """`stepwise.offline.model` -> its file, for every module of the package directories `packages`."""
    modules = {}
    for package in packages:
        for path in package.rglob("*.py"):
            parts = path.relative_to(package.parent).with_suffix("").parts
            modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return modules


def imports_of(module: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The modules of `modules` that `module` imports at any depth (lazy and TYPE_CHECKING imports too),
    with the packages whose `__init__` such an import runs."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    named = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            named += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: `from . import x`, `from ..tasks import y`
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            named += [
                f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base for alias in node.names
            ]
    found = set()
    for name in named:
        parts = name.split(".")
        found |= {".".join(parts[:n]) for n in range(1, len(parts) + 1)} & modules.keys()
    return found - {module}


def import_cycles(*packages: Path) -> list[str]:
    """Every import cycle among the modules of `packages`, as `a -> b -> a`: one for each group of modules
    that import each other, with the group's other modules after it."""
    modules = module_names(packages)
    graph = {module: imports_of(module, path, modules) for module, path in modules.items()}
    cycles = []
    for group in strongly_connected(graph):
        start = min(group)
        path = shortest_path(graph, group, start)
        others = sorted(group - set(path))
        cycles.append(" -> ".join([*path, start]) + (f" (also: {', '.join(others)})" if others else ""))
    return sorted(cycles)


def strongly_connected(graph: dict[str, set[str]]) -> list[set[str]]:
    """The groups of two or more modules that each reach every other one of the group (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    groups: list[set[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in sorted(graph[node]):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            group = set()
            while True:
                member = stack.pop()
                group.add(member)
                if member == node:
                    break
            if len(group) > 1:
                groups.append(group)

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return groups


def shortest_path(graph: dict[str, set[str]], group: set[str], start: str) -> list[str]:
    """The modules of the shortest way from `start` back to it within `group` (`start` first)."""
    paths = {start: [start]}
    queue = [start]
    while queue:
        node = queue.pop(0)
        for target in sorted(graph[node] & group):
            if target == start:
                return paths[node]
            if target not in paths:
                paths[target] = [*paths[node], target]
                queue.append(target)
    raise AssertionError(f"{start} is in no cycle")


def offline_internals_imported(source: str) -> list[str]:
    """The modules of `stepwise.offline` other than its entry point that `source` imports."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module == "stepwise.offline":
            found += [f"stepwise.offline.{alias.name}" for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.append(node.module)
    return [name for name in found if name.startswith("stepwise.offline.") and name != OFFLINE_ENTRY]


def test_no_module_imports_itself_through_others() -> None:
    assert import_cycles(CORE, LOCAL) == []


@pytest.mark.parametrize(
    "modules",
    [
        {"a": "from stepwise.b import x\n", "b": "from stepwise.a import y\n"},
        {"a": "import stepwise.b\n", "b": "def f():\n    from stepwise.a import y\n"},
        {
            "a": "from stepwise.b import x\n",
            "b": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from stepwise.c import Z\n",
            "c": "from stepwise import a\n",
        },
        {"pkg/__init__": "", "pkg/a": "from .b import x\n", "pkg/b": "from stepwise.pkg import a\n"},
        {
            "pkg/__init__": "from stepwise.pkg.a import x\n",
            "pkg/a": "from stepwise.pkg.b import y\n",
            "pkg/b": "",
        },
    ],
)
def test_the_check_finds_a_cycle_however_its_imports_are_written(
    tmp_path: Path, modules: dict[str, str]
) -> None:
    package = tmp_path / "stepwise"
    for name, source in {"__init__": "", **modules}.items():
        (package / f"{name}.py").parent.mkdir(parents=True, exist_ok=True)
        (package / f"{name}.py").write_text(source)
    assert len(import_cycles(package)) == 1


def test_the_check_names_the_modules_of_a_cycle_and_allows_one_way_lazy_imports(tmp_path: Path) -> None:
    package = tmp_path / "stepwise"
    package.mkdir()
    for name, source in {
        "__init__": "",
        "calls": "ToolCall = tuple\n",
        "rules": "from stepwise.calls import ToolCall\ndef f():\n    from stepwise.grammar import g\n",
        "grammar": "from stepwise.calls import ToolCall\n",
    }.items():
        (package / f"{name}.py").write_text(source)
    assert import_cycles(package) == []
    (package / "grammar.py").write_text("from stepwise.rules import f\n")
    assert import_cycles(package) == ["stepwise.grammar -> stepwise.rules -> stepwise.grammar"]


def test_code_outside_the_offline_model_uses_only_its_entry_point() -> None:
    offline = CORE / "offline"
    problems = [
        f"{path.relative_to(ROOT)}: imports {module}"
        for folder in OFFLINE_USERS
        for path in sorted((ROOT / folder).rglob("*.py"))
        if offline not in path.parents and ".venv" not in path.parts
        for module in offline_internals_imported(path.read_text())
    ]
    assert problems == []


def test_the_model_port_and_the_anthropic_adapter_know_nothing_of_the_offline_model() -> None:
    problems = [
        f"{path.relative_to(ROOT)}: imports {module}"
        for path in sorted((CORE / "model").rglob("*.py"))
        for module in imported_modules(path.read_text())
        if package_of(module) == "offline"
    ]
    assert problems == []


@pytest.mark.parametrize(
    ("source", "past_the_entry"),
    [
        ("from stepwise.offline.model import OfflineModel\n", True),
        ("from stepwise.offline import intents\n", True),
        ("def f():\n    import stepwise.offline.task_phrases\n", True),
        ("from stepwise.offline.api import OfflineModel, parse_intent\n", False),
        ("from stepwise.offline import api\n", False),
    ],
)
def test_the_check_finds_an_import_past_the_entry_point(source: str, past_the_entry: bool) -> None:
    assert (offline_internals_imported(source) != []) is past_the_entry
