"""`make build` (sam build without Docker, then bytecode) produces what Lambda will run."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from support.layer import layer_problems
from support.tools import ROOT

from stepwise.prompt.persona import PERSONA_FILES as PERSONA
from stepwise_local.template import Template

PERSONA_FILES = [name for name, _ in PERSONA]
CLIENTS = """
import sys, boto3
for service in sys.argv[1:]:
    print(service, boto3.client(service).meta.endpoint_url)
from stepwise.aws.dynamo_tables import PlainValuesTables
PlainValuesTables(boto3.client("dynamodb")).table("any")
"""


def test_make_build_without_docker_ships_compiled_code(sam: str, tmp_path: Path) -> None:
    build_dir = tmp_path / "build"
    result = subprocess.run(
        ["make", "build", f"BUILD_DIR={build_dir}"],
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
    assert layer_problems(layer / "stepwise") == [], "test fakes in the shipped layer"
    for package in (
        "pydantic",
        "aws_lambda_powertools",
        "urllib3",
        "certifi",
        "chatgpt_md_converter",
        "boto3",
        "yaml",
    ):
        assert (layer / package).is_dir(), f"{package} missing from the layer"
    for name in PERSONA_FILES:  # the persona ships next to the package, where SHIPPED_PERSONA_DIR points
        shipped = layer / "persona" / name
        assert shipped.is_file() and not shipped.is_symlink(), f"persona/{name} missing from the layer"
        assert shipped.read_bytes() == (ROOT / "persona" / name).read_bytes()
    for source in sorted(path for path in (ROOT / "skills").rglob("*") if path.is_file()):  # the skills too
        shipped = layer / "skills" / source.relative_to(ROOT / "skills")
        assert shipped.is_file() and not shipped.is_symlink(), f"{shipped} missing from the layer"
        assert shipped.read_bytes() == source.read_bytes()
    corpora = ROOT / "layers" / "core" / "stepwise" / "offline" / "corpora"
    for source in sorted(corpora.glob("*.toml")):  # the offline model's phrase corpora ship next to it
        shipped = layer / "stepwise" / "offline" / "corpora" / source.name
        assert shipped.is_file() and shipped.read_bytes() == source.read_bytes(), f"{source.name} not shipped"
    assert not (layer / "anthropic").exists(), (
        "the hot path speaks the Messages API itself (docs/performance.md)"
    )
    assert not (layer / "requests").exists(), "the clients speak HTTP over urllib3 (docs/performance.md)"
    models = {path.name for path in (layer / "botocore" / "data").iterdir() if path.is_dir()}
    assert "dynamodb" in models and "ec2" not in models, "the layer keeps only the services the code uses"
    clients = subprocess.run(  # every kept service still makes a client with the right endpoint
        [sys.executable, "-S", "-s", "-c", CLIENTS, *sorted(models)],
        env={"PYTHONPATH": str(layer), "AWS_DEFAULT_REGION": "eu-west-1", "PATH": os.environ.get("PATH", "")},
        capture_output=True,
        text=True,
        check=False,
    )
    assert clients.returncode == 0, clients.stderr[-3000:]
    assert "https://dynamodb.eu-west-1.amazonaws.com" in clients.stdout
    assert "https://states.eu-west-1.amazonaws.com" in clients.stdout
    for module in ("stepwise/runtime", "stepwise/model/messages_api", "pydantic/main"):
        path = layer / module
        assert list(path.parent.glob(f"__pycache__/{path.name}.cpython-313.pyc")), f"no bytecode for {module}"
    for logical_id in Template().functions():
        assert (build_dir / logical_id / "app.py").exists()
        assert list((build_dir / logical_id / "__pycache__").glob("app.cpython-313.pyc"))
    assert (build_dir / "template.yaml").exists()
