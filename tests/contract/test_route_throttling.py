"""A flood on /mcp (or /oauth/callback) never throttles /webhook: each route of the HTTP API has throttling
limits of its own, as SAM writes them into the API's stage (translated with the SAM CLI's own samtranslator,
offline)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from support.tools import ROOT

TEMPLATE = ROOT / "template.yaml"

TRANSLATE = """
import json, sys
from samtranslator.translator.transform import transform
from samtranslator.yaml_helper import yaml_parse

document = yaml_parse(open(sys.argv[1]).read())
for resource in document["Resources"].values():  # local paths: sam build uploads them; irrelevant here
    properties = resource.get("Properties", {})
    for key in ("CodeUri", "DefinitionUri", "ContentUri"):
        if key in properties:
            properties[key] = "s3://bucket/key"

class NoManagedPolicies:
    def load(self):
        return {}

translated = transform(document, {}, NoManagedPolicies())
resources = translated["Resources"].values()
print(json.dumps([r["Properties"] for r in resources if r["Type"] == "AWS::ApiGatewayV2::Stage"]))
"""


def test_each_route_has_its_own_limits_and_mcp_s_are_the_lower(sam: str) -> None:
    python = Path(sam).parent / "python"  # the SAM CLI's own environment holds samtranslator
    printed = subprocess.run(
        [python, "-c", TRANSLATE, str(TEMPLATE)],
        capture_output=True,
        text=True,
        check=True,
        env={"AWS_DEFAULT_REGION": "us-east-1", "PATH": "/usr/bin:/bin"},
        timeout=120,
    ).stdout
    (stage,) = json.loads(printed)
    routes = stage["RouteSettings"]
    # the keys of the routes SAM makes
    assert set(routes) == {"POST /webhook", "ANY /mcp", "GET /oauth/callback"}
    webhook, mcp, callback = routes["POST /webhook"], routes["ANY /mcp"], routes["GET /oauth/callback"]
    assert webhook["ThrottlingRateLimit"] >= stage["DefaultRouteSettings"]["ThrottlingRateLimit"]
    assert mcp["ThrottlingRateLimit"] < webhook["ThrottlingRateLimit"]
    assert mcp["ThrottlingBurstLimit"] < webhook["ThrottlingBurstLimit"]
    # people's browsers back from a sign-in page: a few a day, and a flood there never takes Telegram's
    assert callback["ThrottlingRateLimit"] < webhook["ThrottlingRateLimit"]
    assert callback["ThrottlingBurstLimit"] < webhook["ThrottlingBurstLimit"]
