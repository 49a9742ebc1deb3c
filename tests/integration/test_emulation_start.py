"""What a local stack loads when it starts: the code of the functions only the HTTP API invokes waits for
their first request (the MCP endpoint's SDK was 0.8 s of every `make chat`'s start)."""

from __future__ import annotations

import json
import subprocess
import sys

from support.tools import ROOT

PROBE = """
import json, sys
from stepwise_local.emulation import Emulation, LocalConfig, http_api_event

def mcp_loaded():
    return any(name == "mcp" or name.startswith("mcp.") for name in sys.modules)

with Emulation(LocalConfig(telegram_base_url="http://127.0.0.1:9")) as stack:
    at_start = mcp_loaded()
    answer = stack.invoke("McpFunction", http_api_event("{}", {"content-type": "application/json"}, "/mcp"))
    print(json.dumps({"at_start": at_start, "status": answer["statusCode"], "after": mcp_loaded()}))
"""


def test_the_mcp_endpoints_code_loads_on_its_first_request_not_when_the_stack_starts() -> None:
    # Given a stack started in a process of its own (the tests' processes have imported everything)
    probe = subprocess.run(
        [sys.executable, "-c", PROBE],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={"PATH": "", "PYTHONPATH": f"{ROOT / 'layers' / 'core'}:{ROOT}"},
        timeout=120,
        check=True,
    )
    seen = json.loads(probe.stdout.strip().splitlines()[-1])
    # Then the MCP SDK was not imported at the start; the endpoint's first request loads it and is answered
    assert seen["at_start"] is False
    assert seen["after"] is True and seen["status"] == 401, "a request without a token: refused"
