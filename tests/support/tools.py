"""Where the repository and its command-line tools are."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def tool(name: str, env_var: str | None = None, venv: str = ".venv") -> str:
    """The path of a command-line tool; skipped when absent locally, a failure in CI."""
    candidates = [os.environ.get(env_var or ""), str(ROOT / venv / "bin" / name), shutil.which(name)]
    for candidate in candidates:
        if candidate and Path(candidate).exists():
            return candidate
    message = f"{name} is not installed (make test installs it)"
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)
