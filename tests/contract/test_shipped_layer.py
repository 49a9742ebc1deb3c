"""The shipped layer holds production code only: fakes and emulation-only backends live in stepwise_local.

test_sam_build.py runs the same check on the layer `make build` produces.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from support.layer import layer_problems
from support.tools import ROOT

from stepwise.prompt.persona import PERSONA_FILES, SHIPPED_PERSONA_DIR
from stepwise.skills.catalog import SHIPPED_SKILLS_DIR

LAYER_PACKAGE = ROOT / "layers" / "core" / "stepwise"
BUILT_PACKAGE = ROOT / ".aws-sam" / "build" / "CoreLayer" / "python" / "stepwise"


def test_the_layer_source_holds_no_test_fakes() -> None:
    assert layer_problems(LAYER_PACKAGE) == []


def test_a_built_layer_holds_no_test_fakes() -> None:
    if not BUILT_PACKAGE.is_dir():
        pytest.skip("no build in .aws-sam/build (make build); test_sam_build.py checks a fresh one")
    assert layer_problems(BUILT_PACKAGE) == []


def test_the_layer_source_holds_the_repository_persona_files() -> None:
    # layers/core/persona links to the repository's persona/: sam build copies the files into the layer.
    assert (ROOT / "layers" / "core" / "persona").resolve() == (ROOT / "persona").resolve()
    assert SHIPPED_PERSONA_DIR.resolve() == (ROOT / "persona").resolve()
    for name, _ in PERSONA_FILES:
        assert (SHIPPED_PERSONA_DIR / name).is_file(), name


def test_the_layer_source_holds_the_repository_skills() -> None:
    # layers/core/skills links to the repository's skills/, the way the persona folder does.
    assert (ROOT / "layers" / "core" / "skills").resolve() == (ROOT / "skills").resolve()
    assert SHIPPED_SKILLS_DIR.resolve() == (ROOT / "skills").resolve()
    assert sorted(path.parent.name for path in SHIPPED_SKILLS_DIR.glob("*/SKILL.md")) == [
        "message-to-tasks",
        "trip-planning",
        "weekly-review",
    ]


def test_the_check_finds_a_fake(tmp_path: Path) -> None:
    package = tmp_path / "stepwise"
    (package / "tasks").mkdir(parents=True)
    (package / "tasks" / "memory.py").write_text("class InMemoryTaskRepository:\n    pass\n")
    (package / "runtime.py").write_text("from stepwise_local.local_memory import install\n")
    assert layer_problems(package) == [
        "stepwise/runtime.py: imports stepwise_local.local_memory",
        "stepwise/tasks/memory.py: a fake's module name",
        "stepwise/tasks/memory.py: class InMemoryTaskRepository",
    ]
