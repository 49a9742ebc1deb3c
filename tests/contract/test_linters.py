"""The template and the state machine pass the AWS linters."""

from __future__ import annotations

import os
import subprocess

from support.tools import ROOT, tool

ASL = ROOT / "statemachine" / "turn.asl.json"


def run(*command: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "SAM_CLI_TELEMETRY": "0"}
    return subprocess.run(
        command, cwd=ROOT, capture_output=True, text=True, timeout=300, env=env, check=False
    )


def test_cfn_lint_accepts_the_template() -> None:
    result = run(tool("cfn-lint"), "template.yaml")
    assert result.returncode == 0, result.stdout + result.stderr


def test_sam_validate_lint_accepts_the_template(sam: str) -> None:
    result = run(sam, "validate", "--lint", "--region", "us-east-1")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "is a valid SAM Template" in result.stdout + result.stderr


def test_statelint_accepts_the_state_machine() -> None:
    result = run(tool("statelint"), str(ASL))
    assert result.returncode == 0, result.stdout + result.stderr
