"""The build keeps only the AWS service models the code uses (scripts/trim_botocore.py): every client or
resource the core and the functions create must be of a service the trimmed layer still has."""

from __future__ import annotations

import ast
import gzip
import importlib.util
import json
from pathlib import Path

from support.tools import ROOT

SPEC = importlib.util.spec_from_file_location("trim_botocore", ROOT / "scripts" / "trim_botocore.py")
assert SPEC is not None and SPEC.loader is not None
TRIM = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(TRIM)


def created_services(root: Path) -> set[tuple[str, str]]:
    """("client" | "resource", service) for every `boto3.client("x")` / `boto3.resource("x")` under `root`."""
    found = set()
    for path in root.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and isinstance(node.func.value, ast.Name)
                and node.func.value.id == "boto3"
                and node.func.attr in ("client", "resource")
                and node.args
                and isinstance(node.args[0], ast.Constant)
            ):
                found.add((node.func.attr, str(node.args[0].value)))
    return found


def test_every_service_the_code_uses_is_kept_in_the_layer() -> None:
    used = created_services(ROOT / "layers" / "core" / "stepwise") | created_services(ROOT / "functions")
    assert ("client", "dynamodb") in used and ("client", "transcribe") in used  # the scan finds them
    clients = {service for kind, service in used}
    resources = {service for kind, service in used if kind == "resource"}
    assert clients - TRIM.SERVICES == set(), "add these to scripts/trim_botocore.py"
    assert resources - TRIM.RESOURCES == set(), "add these to scripts/trim_botocore.py"
    assert "ssm" in TRIM.SERVICES  # Powertools Parameters (the secrets)


def test_trimming_keeps_the_listed_services_and_removes_the_others(tmp_path: Path) -> None:
    layer = tmp_path / "python"
    for service in ("dynamodb", "ec2", "ssm", "sts", "sso", "sso-oidc", *TRIM.SERVICES):
        version = layer / "botocore" / "data" / service / "2012-08-10"
        version.mkdir(parents=True, exist_ok=True)
        prefix = {"stepfunctions": "states"}.get(service, service)
        model = json.dumps({"metadata": {"endpointPrefix": prefix}}).encode()
        (version / "service-2.json.gz").write_bytes(gzip.compress(model))  # as botocore ships it
    partition = {"partition": "aws", "services": {"dynamodb": {}, "ec2": {}, "states": {}}}
    (layer / "botocore" / "data" / "endpoints.json").write_text(json.dumps({"partitions": [partition]}))
    for resource in ("dynamodb", "ec2"):
        (layer / "boto3" / "data" / resource).mkdir(parents=True)
    assert TRIM.trim(layer) == (1, 2)  # no resource model is kept: the tables use the client
    kept = {path.name for path in (layer / "botocore" / "data").iterdir()}
    assert kept == set(TRIM.SERVICES) | {"endpoints.json"}
    assert {path.name for path in (layer / "boto3" / "data").iterdir()} == set()
    for service in TRIM.SERVICES:  # kept uncompressed: botocore reads `.json` first, without decompressing
        version = layer / "botocore" / "data" / service / "2012-08-10"
        assert [path.name for path in version.iterdir()] == ["service-2.json"]
        assert json.loads((version / "service-2.json").read_text())["metadata"]["endpointPrefix"]
    endpoints = json.loads((layer / "botocore" / "data" / "endpoints.json").read_text())
    assert set(endpoints["partitions"][0]["services"]) == {"dynamodb", "states"}
