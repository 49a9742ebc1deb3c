"""Cold starts as Lambda loads the built artifacts: each function's import cost as a ratio to `import boto3`.

Reads the output of `make build` (`.aws-sam/build`, or BUILD_DIR): for every function, a fresh interpreter
with only the function's directory and the layer's `python/` on `sys.path` (no site-packages, as in Lambda)
imports the handler, with the bytecode the build ships. `import boto3` from the same layer, measured in the
same run, is the baseline: each import is timed right after an `import boto3` of its own, and the figure is
the median of those pairs' ratios, printed with their interquartile range (on a busy machine both halves of a
pair slow down alike; the range says how far to trust the median). The floor is what every function imports
before any of Stepwise's code: boto3, Powertools' Logger and pydantic (with one model built).

For CallModel it also times its first model call's setup: importing the Messages API client and building its
HTTP client; for RunTools its first tool call's: building the turn's tool catalog (every tool deployed: tasks,
memory, reminders) and its store adapters, and parsing a call, up to the first request to DynamoDB. Then what
the layer imports lazily, only when a turn needs it: python-dateutil, which reads the dates and times of
reminder phrases in the offline rules, on its own and after boto3 (which imports it too, so in Lambda it is
loaded already); the MCP SDK (`import mcp`) and the MCP server of the built-in tools (`stepwise.mcp.server`),
and the client of outside MCP servers (`stepwise.remote_tools.mcp_client`), which CallModel and RunTools
import only to reach such a server. A function that loads the MCP SDK is marked: only McpFunction (the /mcp
endpoint) should; RunTools runs the built-in tools through the registry. It prints medians, ratios, the
modules each import loads, and the layer's size, unzipped and zipped. Run: make bench (BENCH_RUNS pairs
each, 15 by default)
"""

from __future__ import annotations

import io
import os
import statistics
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BUILD = Path(os.environ.get("BUILD_DIR", ROOT / ".aws-sam" / "build"))
RUNS = int(os.environ.get("BENCH_RUNS", "15"))  # pairs per function
# RunTools' first tool call: the budget of a turn that uses only built-in tools (docs/tools-and-approvals.md).
TARGETS = {
    "WebhookFunction": 1.6,
    "CallModelFunction (first model call)": 1.8,  # the lean Messages API client: no SDK (docs/performance.md)
    "RunToolsFunction (first tool call)": 2.0,
    "McpFunction": 6.0,  # the MCP SDK, Starlette and Mangum: the one function that speaks MCP
}
LOADS_THE_SDK = {"McpFunction"}
# Lazy imports, timed with their first use: (label, mode, target ratio to `import boto3`).
LAZY = [
    ("python-dateutil (reminder times)", "dateutil", 0.25),
    ("python-dateutil after import boto3", "dateutil-after-boto3", 0.05),
    ("MCP SDK (import mcp)", "mcp", 5.0),
    ("MCP server (stepwise.mcp.server)", "mcp-server", 5.5),
    # What the first call of an outside server's tool (or a stale list's refresh) imports before sending.
    ("MCP client (stepwise.remote_tools.mcp_client)", "mcp-client", 5.5),
    # What a turn with a voice note imports (LoadContext), and its spoken answer (FinishTurn): never a plain
    # turn (a function's import that loads `stepwise.voice` is marked).
    ("voice note: LoadContext's part + Transcribe", "voice-transcribe", 0.3),
    ("voice note: LoadContext's part + OpenAI API", "voice-openai", 0.3),
    ("spoken answer: FinishTurn's part + Polly", "voice-polly", 0.3),
]
VOICE_OWNERS = {
    "voice-transcribe": "LoadContextFunction",
    "voice-openai": "LoadContextFunction",
    "voice-polly": "FinishTurnFunction",
}
# Lambda gives every function its role's credentials as environment variables: the SDK's credential chain
# stops at the first provider it tries (without them it would search files and the instance metadata).
LAMBDA_CREDENTIALS = {
    "AWS_ACCESS_KEY_ID": "ASIABENCH",
    "AWS_SECRET_ACCESS_KEY": "bench",
    "AWS_SESSION_TOKEN": "bench",
}
# Set for every function by the template (Globals): no pydantic plugin discovery on the first validator built.
DEPLOYED_ENVIRONMENT = {"PYDANTIC_DISABLE_PLUGINS": "__all__"}
# What the first tool call's catalog needs to offer every tool: a schedule target and a vector bucket (names
# only; nothing is called).
TOOL_SETTINGS = {
    "REMINDER_TARGET_ARN": "arn:aws:lambda:us-east-1:123456789012:function:bench",
    "VECTOR_BUCKET_NAME": "bench",
}
DEFAULT_TARGET = 1.6
SNIPPET = """
import sys, time
mode = sys.argv[1]
if mode == "dateutil-after-boto3":
    import boto3
if mode.startswith("voice"):  # on top of the function that imports it (what it loads already is not timed)
    import importlib.util
    spec = importlib.util.spec_from_file_location("app", sys.argv[2])
    module = importlib.util.module_from_spec(spec); spec.loader.exec_module(module)
start = time.perf_counter()
if mode == "boto3":
    import boto3
elif mode == "floor":  # what every function imports before any of Stepwise's code
    import boto3
    from aws_lambda_powertools import Logger
    from pydantic import BaseModel
    class Probe(BaseModel):  # building a model loads the rest of pydantic's machinery
        value: int = 0
elif mode.startswith("dateutil"):
    from datetime import datetime
    from dateutil import parser
    parser.parse("24 december 18:00", default=datetime(2026, 11, 1))  # what a reminder's date costs first
elif mode == "mcp":
    import mcp
elif mode == "mcp-server":
    import stepwise.mcp.server
elif mode == "mcp-client":
    import stepwise.remote_tools.mcp_client
elif mode == "voice-transcribe":
    import stepwise.states.voice_turn, stepwise.voice.aws_transcribe
elif mode == "voice-openai":
    import stepwise.states.voice_turn, stepwise.voice.openai_stt
elif mode == "voice-polly":
    import stepwise.states.voice_reply, stepwise.voice.polly
else:
    import importlib.util
    spec = importlib.util.spec_from_file_location("app", sys.argv[2])
    module = importlib.util.module_from_spec(spec); spec.loader.exec_module(module)
middle = time.perf_counter()
if mode == "model":
    from stepwise.model.messages_api import MessagesApiModel
    MessagesApiModel("sk-bench", None, 60.0, 0)._http.pool()  # what the first complete() does before sending
elif mode == "tools":
    from stepwise.runtime import get_runtime
    get_runtime().turn_services.tools.parse("add_task", {"title": "milk"})  # up to the first DynamoDB call
sdk = any(name.split(".")[0] in ("mcp", "mcp_types") for name in sys.modules)
voice = any(name.startswith("stepwise.voice.") for name in sys.modules)
print(f"{middle - start:.5f} {time.perf_counter() - middle:.5f} {len(sys.modules)} {int(sdk)} {int(voice)}")
"""


def run(function_dir: Path | None, mode: str) -> tuple[float, float, int, bool, bool]:
    """One fresh interpreter: (import seconds, extra seconds, modules loaded, whether the MCP SDK loaded,
    whether the voice package loaded)."""
    paths = [str(BUILD / "CoreLayer" / "python")]
    if function_dir is not None:
        paths.insert(0, str(function_dir))
    env = {
        "PATH": os.environ.get("PATH", ""),
        "PYTHONPATH": os.pathsep.join(paths),
        "PYTHONDONTWRITEBYTECODE": "1",  # Lambda's code directory is read-only
        "AWS_DEFAULT_REGION": "us-east-1",
        **LAMBDA_CREDENTIALS,
        **DEPLOYED_ENVIRONMENT,
        "POWERTOOLS_SERVICE_NAME": "stepwise",
        **(TOOL_SETTINGS if mode == "tools" else {}),
    }
    app = str(function_dir / "app.py") if function_dir else ""
    out = subprocess.run(  # noqa: S603 (our own interpreter and snippet)
        [sys.executable, "-S", "-s", "-c", SNIPPET, mode, app],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    return float(out[0]), float(out[1]), int(out[2]), out[3] == "1", out[4] == "1"


def paired(function_dir: Path | None, mode: str) -> tuple[float, float, float, float, int, bool, bool]:
    """`mode` against `import boto3`, alternated run by run so that a busy machine slows both alike: (median
    ratio of the pairs, its first and third quartiles, median seconds, modules loaded, whether the MCP SDK
    loaded, whether voice did)."""
    ratios, runs = [], []
    modules, sdk, voice = 0, False, False
    for _ in range(RUNS):
        baseline = run(None, "boto3")[0]
        seconds, extra, modules, sdk, voice = run(function_dir, mode)
        runs.append(seconds + extra)
        ratios.append((seconds + extra) / baseline)
    first, _, third = statistics.quantiles(ratios, n=4)
    return statistics.median(ratios), first, third, statistics.median(runs), modules, sdk, voice


def layer_sizes(layer: Path) -> tuple[int, int]:
    """(unzipped bytes, zipped bytes) of the layer, zipped as SAM does (deflate)."""
    buffer = io.BytesIO()
    unzipped = 0
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(layer.rglob("*")):
            if path.is_file():
                unzipped += path.stat().st_size
                archive.write(path, path.relative_to(layer))
    return unzipped, buffer.tell()


def row(name: str, measured: tuple[float, float, float, float, int, bool, bool], target: float) -> str:
    """One printed line: median ms, the median ratio with its interquartile range, target, modules."""
    ratio, first, third, seconds, modules, _, _ = measured
    verdict = "ok" if ratio <= target else "OVER"
    return (
        f"{name:<46}{seconds * 1000:>6.0f} ms{ratio:>7.2f}x  {first:.2f}-{third:.2f}x"
        f"{target:>7.2f}x{modules:>8}  {verdict}"
    )


def main() -> None:
    if not (BUILD / "CoreLayer" / "python").is_dir():
        raise SystemExit(f"no build in {BUILD}: run `make build` first")
    boto3_modules = run(None, "boto3")[2]
    print(
        f"baseline: import boto3 from the layer ({boto3_modules} modules), timed before each of {RUNS} runs; "
        "ratio: the median of the pairs' ratios, then their interquartile range"
    )
    print(f"{'import':<46}{'median':>9}{'ratio':>8}  {'q1-q3':<11}{'target':>6}{'modules':>8}")
    print(row("floor: boto3, Powertools' Logger, a pydantic model", paired(None, "floor"), DEFAULT_TARGET))
    for function_dir in sorted(p for p in BUILD.iterdir() if (p / "app.py").is_file()):
        cases = [(function_dir.name, "import")]
        if function_dir.name == "CallModelFunction":
            cases.append(("CallModelFunction (first model call)", "model"))
        if function_dir.name == "RunToolsFunction":
            cases.append(("RunToolsFunction (first tool call)", "tools"))
        for name, mode in cases:
            measured = paired(function_dir, mode)
            sdk, voice = measured[5], measured[6]
            expected = function_dir.name in LOADS_THE_SDK
            print(
                row(name, measured, TARGETS.get(name, DEFAULT_TARGET))
                + (("  (the MCP SDK, as it should)" if expected else "  LOADS THE MCP SDK") if sdk else "")
                + ("  LOADS THE VOICE PACKAGE" if voice else "")
            )
    for name, mode, target in LAZY:
        if mode.startswith("mcp") and not (BUILD / "CoreLayer" / "python" / "mcp").is_dir():
            print(f"{name:<46}  not in this layer")
            continue
        owner = VOICE_OWNERS.get(mode)
        print(row(name, paired(BUILD / owner if owner else None, mode), target))
    unzipped, zipped = layer_sizes(BUILD / "CoreLayer")
    print(f"layer: {unzipped / 1e6:.1f} MB unzipped, {zipped / 1e6:.1f} MB zipped")


if __name__ == "__main__":
    main()
