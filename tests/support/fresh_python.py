"""Run code in a fresh interpreter with the core package on its path: what it imports is its own, not what
other tests loaded before."""

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
