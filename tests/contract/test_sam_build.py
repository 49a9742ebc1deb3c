"""`sam build` works without Docker and produces what Lambda will run."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from support.tools import ROOT

from stepwise_local.template import Template


def test_sam_build_without_docker(sam: str, tmp_path: Path) -> None:
    build_dir = tmp_path / "build"
    result = subprocess.run(
        [
            sam,
            "build",
            "--build-dir",
            str(build_dir),
            "--cache-dir",
            str(tmp_path / "cache"),
            "--no-use-container",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
        env={**os.environ, "SAM_CLI_TELEMETRY": "0"},
    )
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
    layer = build_dir / "CoreLayer" / "python"
    assert (layer / "stepwise" / "__init__.py").exists()
    for package in (
        "pydantic",
        "anthropic",
        "aws_lambda_powertools",
        "requests",
        "nanoid",
        "chatgpt_md_converter",
    ):
        assert (layer / package).is_dir(), f"{package} missing from the layer"
    for logical_id in Template().functions():
        assert (build_dir / logical_id / "app.py").exists()
    assert (build_dir / "template.yaml").exists()
