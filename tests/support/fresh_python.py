"""Run code in a fresh interpreter with the core package on its path: what it imports is its own, not what
other tests loaded before (and, with `run_clean`, nothing of this process's environment either)."""

from __future__ import annotations

import os
import subprocess
import sys

from support.tools import ROOT


def run_fresh(code: str, timeout: float = 60) -> str:
    """The standard output of `code` run by a new interpreter in the repository's root."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(["layers/core", "."])}
    result = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=timeout,
        check=True,
    )
    return result.stdout


def run_clean(code: str, *args: str) -> str:
    """The standard output of `code` (given `args`) run by a new interpreter in the repository's root, with
    only what a function's environment has that matters to an import: PATH, the core and the repository on
    its path, a region and the service's name."""
    env = {
        "PATH": os.environ.get("PATH", ""),
        "PYTHONPATH": os.pathsep.join([str(ROOT / "layers" / "core"), str(ROOT)]),
        "AWS_DEFAULT_REGION": "us-east-1",
        "POWERTOOLS_SERVICE_NAME": "stepwise",
    }
    result = subprocess.run(
        [sys.executable, "-c", code, *args], env=env, capture_output=True, text=True, check=True, cwd=ROOT
    )
    return result.stdout
