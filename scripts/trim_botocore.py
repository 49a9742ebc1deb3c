"""Keep, in a build's layer, only the AWS service models Stepwise's code uses (`make build`, `make bench`).

botocore ships the models of every AWS service (about 450 folders, 28 MB), and each new client or resource
lists them all (`list_available_services`, three times for boto3's DynamoDB resource); the first client also
parses `endpoints.json` (1.25 MB, every service's endpoints). Measured on this machine, boto3's DynamoDB
resource took 74-103 ms with the full models, 46 ms with only these services, and 27 ms with `endpoints.json`
cut to them too: of every function's first call, a third of `import boto3` or more. The functions create
clients for a handful of services, listed here; `tests/contract/test_botocore_services.py` fails when the code
asks for a service this list does not keep, and the build's test creates a client of each.

The kept models are also stored uncompressed: botocore reads `x.json` before `x.json.gz`, and each new client
otherwise decompresses its service's model again (DynamoDB's 2 ms, Lambda's 1.8 ms, SSM's 3 ms here), on the
first call of every function; the layer grows by about 5 MB unzipped, far under Lambda's limit.
"""

from __future__ import annotations

import gzip
import json
import shutil
import sys
from pathlib import Path

# Every service the core and the functions create a client or resource for, SSM for Powertools Parameters,
# and those botocore's credential providers may load (STS, SSO) where credentials are not in the environment.
SERVICES = frozenset(
    {
        "bedrock-runtime",
        "dynamodb",
        "lambda",
        "polly",
        "s3",
        "s3vectors",
        "scheduler",
        "ssm",
        "stepfunctions",
        "transcribe",
        "sts",
        "sso",
        "sso-oidc",
    }
)
# boto3's resource models: none (the tables are thin wrappers over the client: stepwise/aws/dynamo_tables.py)
RESOURCES: frozenset[str] = frozenset()


def trim(layer: Path) -> tuple[int, int]:
    """Remove the other services' models from `layer` (the layer's `python/` folder); returns how many
    botocore and boto3 folders were removed."""
    removed = []
    for data, keep in ((layer / "botocore" / "data", SERVICES), (layer / "boto3" / "data", RESOURCES)):
        if not data.is_dir():
            raise SystemExit(f"no {data}: is this a layer built by `sam build`?")
        missing = sorted(keep - {path.name for path in data.iterdir()})
        if data.parent.name == "botocore" and missing:
            raise SystemExit(f"botocore has no models for {missing}: update scripts/trim_botocore.py")
        gone = [path for path in data.iterdir() if path.is_dir() and path.name not in keep]
        for path in gone:
            shutil.rmtree(path)
        removed.append(len(gone))
    trim_endpoints(layer / "botocore" / "data")
    inflate_models(layer / "botocore" / "data")
    return removed[0], removed[1]


def inflate_models(data: Path) -> None:
    """Store every kept `.json.gz` model as plain `.json` (what botocore looks for first)."""
    for packed in sorted(data.rglob("*.json.gz")):
        packed.with_suffix("").write_bytes(gzip.decompress(packed.read_bytes()))
        packed.unlink()


def trim_endpoints(data: Path) -> None:
    """Keep in `endpoints.json` the endpoints of the kept services only (by their models' endpoint prefix),
    written compactly."""
    endpoints = data / "endpoints.json"
    if not endpoints.is_file():
        return
    prefixes = {endpoint_prefix(service) for service in data.iterdir() if service.is_dir()}
    document = json.loads(endpoints.read_text())
    for partition in document["partitions"]:
        partition["services"] = {k: v for k, v in partition["services"].items() if k in prefixes}
    endpoints.write_text(json.dumps(document, separators=(",", ":")))


def endpoint_prefix(service: Path) -> str:
    """The endpoint prefix of a service's newest model (`states` for stepfunctions)."""
    newest = sorted(version for version in service.iterdir() if version.is_dir())[-1]
    model = newest / "service-2.json.gz"
    raw = gzip.decompress(model.read_bytes()) if model.is_file() else (newest / "service-2.json").read_bytes()
    return str(json.loads(raw)["metadata"]["endpointPrefix"])


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: trim_botocore.py BUILD_DIR", file=sys.stderr)
        return 2
    layer = Path(argv[1]) / "CoreLayer" / "python"
    services, resources = trim(layer)
    print(f"trimmed the layer's AWS models: {services} botocore and {resources} boto3 services removed")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
