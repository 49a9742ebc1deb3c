"""What marks test code in a `stepwise` package directory (the contract tests check the layer with it)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

FAKE_CLASS = re.compile(r"^(InMemory|Fake|Local|Stub|Mock|Scripted)[A-Z_]")
FAKE_MODULE = re.compile(r"^(fake|fakes|stub|stubs|mock|mocks|local|memory|in_memory|testing)$")
TEST_ONLY_IMPORTS = ("stepwise_local", "moto", "pytest", "unittest.mock", "support")


def _module_problems(relative: Path) -> list[str]:
    stem = relative.name.split(".", 1)[0]
    if relative.parent.name == "__pycache__":
        relative = relative.parent.parent / f"{stem}.py"
    # `stepwise/memory/` (long-term memory) is a production package; a module file named so is a fake.
    if FAKE_MODULE.match(stem) and stem != "__init__":
        return [f"{relative}: a fake's module name"]
    return []


def _source_problems(relative: Path, source: str) -> list[str]:
    problems = []
    for node in ast.walk(ast.parse(source, str(relative))):
        if isinstance(node, ast.ClassDef) and FAKE_CLASS.match(node.name):
            problems.append(f"{relative}: class {node.name}")
        modules: list[str] = []
        if isinstance(node, ast.Import):
            modules = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            modules = [node.module]
        for module in modules:
            if any(module == banned or module.startswith(banned + ".") for banned in TEST_ONLY_IMPORTS):
                problems.append(f"{relative}: imports {module}")
    return problems


def layer_problems(package: Path) -> list[str]:
    """Every sign of test code in a `stepwise` package directory: fake modules, fake classes, test imports."""
    problems: list[str] = []
    for path in sorted(package.rglob("*")):
        if path.suffix not in (".py", ".pyc"):
            continue
        relative = path.relative_to(package.parent)
        problems += _module_problems(relative)
        if path.suffix == ".py":
            problems += _source_problems(relative, path.read_text(encoding="utf-8"))
    return sorted(set(problems))
