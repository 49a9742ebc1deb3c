"""Cold starts as Lambda loads the built artifacts: each function's import cost as a ratio to `import boto3`.

Reads the output of `make build` (`.aws-sam/build`, or BUILD_DIR): for every function, a fresh interpreter
with only the function's directory and the layer's `python/` on `sys.path` (no site-packages, as in Lambda)
imports the template's Handler (`stepwise.lambda_entry`, which imports the function's `app.handler` with the
garbage collector paused), with the bytecode the build ships. `import boto3` from the same layer, measured in
the same run, is the baseline: each import is timed right after an `import boto3` of its own, and the figure
is the median of those pairs' ratios, printed with their interquartile range (on a busy machine both halves of
a pair slow down alike; the range says how far to trust the median). The imports are timed in turn, round
after round, so that a slow minute of the machine falls on all of them alike. The floor is what every function
imports before any of Stepwise's code: boto3, Powertools' Logger and pydantic (with one model built), imported
as the entry imports them (the collector paused); the baseline is a plain `import boto3`.

For CallModel it also times its first model call's setup: importing the Messages API client and building its
HTTP client; for RunTools its first tool call's: building the turn's tool catalog (every tool deployed: tasks,
memory, reminders) and its store adapters, and parsing a call, up to the first request to DynamoDB; for the
Mini App (AppFunction) its first API request's: its services, the code that reads and acts, and the tool
catalog, up to the first request to DynamoDB (its page alone needs nothing of that). Then what
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
import textwrap
import zipfile
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parent.parent
# Absolute, as the entries of Lambda's sys.path are (/var/task, /opt/python).
BUILD = Path(os.environ.get("BUILD_DIR", ROOT / ".aws-sam" / "build")).resolve()
RUNS = int(os.environ.get("BENCH_RUNS", "15"))  # pairs per function
# RunTools' first tool call: the budget of a turn that uses only built-in tools (docs/tools-and-approvals.md).
TARGETS = {
    "WebhookFunction": 1.6,
    "CallModelFunction (first model call)": 1.8,  # the lean Messages API client: no SDK (docs/performance.md)
    "RunToolsFunction (first tool call)": 2.0,
    "McpFunction": 6.0,  # the MCP SDK, Starlette and Mangum: the one function that speaks MCP
    # The Mini App's first API request builds the tool catalog and its stores as RunTools' first tool call
    # does (itself over 2x, docs/performance.md); the page is not on a turn's path.
    "AppFunction (first API request)": 3.0,
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
FLOOR_NAME = "floor: boto3, Powertools' Logger, a pydantic model"
# What a function's first call sets up on top of its import, timed as cases of their own.
FIRST_CALLS = {
    "CallModelFunction": [("CallModelFunction (first model call)", "model")],
    "RunToolsFunction": [("RunToolsFunction (first tool call)", "tools")],
    "AppFunction": [("AppFunction (first API request)", "app")],
}
# What every function imports before any of Stepwise's code, as its entry (stepwise.lambda_entry) imports it:
# the collector paused, then frozen. Building a model loads the rest of pydantic's machinery.
FLOOR = """\
import gc
gc.disable()
import boto3
from aws_lambda_powertools import Logger
from pydantic import BaseModel
class Probe(BaseModel):
    value: int = 0
gc.freeze(); gc.enable()
"""
SNIPPET = """
import sys, time
mode = sys.argv[1]
if mode == "dateutil-after-boto3":
    import boto3
if mode.startswith("voice"):  # on top of the function that imports it (what it loads already is not timed)
    import stepwise.lambda_entry
start = time.perf_counter()
if mode == "boto3":
    import boto3
elif mode == "floor":  # what every function imports before any of Stepwise's code, as its entry does
FLOOR_HERE
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
else:  # what Lambda imports, the template's Handler: the function's app.handler, the collector paused
    import stepwise.lambda_entry
middle = time.perf_counter()
if mode == "model":
    from stepwise.model.messages_api import MessagesApiModel
    MessagesApiModel("sk-bench", None, 60.0, 0)._http.pool()  # what the first complete() does before sending
elif mode == "tools":
    from stepwise.runtime import get_runtime
    # up to the first DynamoDB call
    get_runtime().turn_services.tools.registry.parse("add_task", {"title": "milk"})
elif mode == "app":  # the Mini App's first API request, up to its first DynamoDB call (the rate counter)
    from stepwise.runtime import get_runtime
    import stepwise.miniapp.actions, stepwise.miniapp.snapshot
    get_runtime().app_services.tools().parse("complete_task", {"task_id": 1})
sdk = any(name.split(".")[0] in ("mcp", "mcp_types") for name in sys.modules)
voice = any(name.startswith("stepwise.voice.") for name in sys.modules)
print(f"{middle - start:.5f} {time.perf_counter() - middle:.5f} {len(sys.modules)} {int(sdk)} {int(voice)}")
"""
SNIPPET = SNIPPET.replace("FLOOR_HERE\n", textwrap.indent(FLOOR, "    "))


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
        **(TOOL_SETTINGS if mode in ("tools", "app") else {}),
        **({"CONNECTIONS_TABLE": "bench"} if mode == "app" else {}),
    }
    out = subprocess.run(  # noqa: S603 (our own interpreter and snippet)
        [sys.executable, "-S", "-s", "-c", SNIPPET, mode],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    return float(out[0]), float(out[1]), int(out[2]), out[3] == "1", out[4] == "1"


class Case(NamedTuple):
    """One import to time: its printed name, the function directory on its path (None: the layer only), the
    snippet's mode and its target ratio."""

    name: str
    function_dir: Path | None
    mode: str
    target: float


Measured = tuple[float, float, float, float, int, bool, bool]


def paired_round_robin(cases: list[Case]) -> dict[str, Measured]:
    """Each case against `import boto3`, alternated run by run so that a busy machine slows both halves of a
    pair alike, and the cases taken in turn, round after round, so that a slow minute falls on all of them
    rather than on the few measured in it. Per case: (median ratio of the pairs, its first and third
    quartiles, median seconds, modules loaded, whether the MCP SDK loaded, whether voice did)."""
    ratios: dict[str, list[float]] = {case.name: [] for case in cases}
    seconds: dict[str, list[float]] = {case.name: [] for case in cases}
    last: dict[str, tuple[int, bool, bool]] = {}
    for _ in range(RUNS):
        for case in cases:
            baseline = run(None, "boto3")[0]
            took, extra, modules, sdk, voice = run(case.function_dir, case.mode)
            seconds[case.name].append(took + extra)
            ratios[case.name].append((took + extra) / baseline)
            last[case.name] = (modules, sdk, voice)
    measured = {}
    for case in cases:
        first, _, third = statistics.quantiles(ratios[case.name], n=4)
        median_ratio, median_seconds = (
            statistics.median(ratios[case.name]),
            statistics.median(seconds[case.name]),
        )
        measured[case.name] = (median_ratio, first, third, median_seconds, *last[case.name])
    return measured


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


def row(name: str, measured: Measured, target: float) -> str:
    """One printed line: median ms, the median ratio with its interquartile range, target, modules."""
    ratio, first, third, seconds, modules, _, _ = measured
    verdict = "ok" if ratio <= target else "OVER"
    return (
        f"{name:<46}{seconds * 1000:>6.0f} ms{ratio:>7.2f}x  {first:.2f}-{third:.2f}x"
        f"{target:>7.2f}x{modules:>8}  {verdict}"
    )


def cases() -> tuple[list[Case], list[str]]:
    """Every import to time, in printing order, and the lazy imports this layer does not have."""
    found = [Case(FLOOR_NAME, None, "floor", DEFAULT_TARGET)]
    for function_dir in sorted(p for p in BUILD.iterdir() if (p / "app.py").is_file()):
        found.append(
            Case(function_dir.name, function_dir, "import", TARGETS.get(function_dir.name, DEFAULT_TARGET))
        )
        for name, mode in FIRST_CALLS.get(function_dir.name, []):
            found.append(Case(name, function_dir, mode, TARGETS.get(name, DEFAULT_TARGET)))
    missing = []
    for name, mode, target in LAZY:
        if mode.startswith("mcp") and not (BUILD / "CoreLayer" / "python" / "mcp").is_dir():
            missing.append(name)
            continue
        owner = VOICE_OWNERS.get(mode)
        found.append(Case(name, BUILD / owner if owner else None, mode, target))
    return found, missing


def main() -> None:
    if not (BUILD / "CoreLayer" / "python").is_dir():
        raise SystemExit(f"no build in {BUILD}: run `make build` first")
    boto3_modules = run(None, "boto3")[2]
    print(
        f"baseline: import boto3 from the layer ({boto3_modules} modules), timed before each of {RUNS} runs; "
        "ratio: the median of the pairs' ratios, then their interquartile range"
    )
    print(f"{'import':<46}{'median':>9}{'ratio':>8}  {'q1-q3':<11}{'target':>6}{'modules':>8}")
    timed, missing = cases()
    measured = paired_round_robin(timed)
    for case in timed:
        result = measured[case.name]
        sdk, voice = result[5], result[6]
        function = case.function_dir.name if case.function_dir is not None and case.mode != "floor" else ""
        notes = ""
        if sdk and case.mode in ("import", "model", "tools", "app"):
            notes += "  (the MCP SDK, as it should)" if function in LOADS_THE_SDK else "  LOADS THE MCP SDK"
        if voice and case.mode in ("import", "model", "tools", "app"):
            notes += "  LOADS THE VOICE PACKAGE"
        print(row(case.name, result, case.target) + notes)
    for name in missing:
        print(f"{name:<46}  not in this layer")
    unzipped, zipped = layer_sizes(BUILD / "CoreLayer")
    print(f"layer: {unzipped / 1e6:.1f} MB unzipped, {zipped / 1e6:.1f} MB zipped")


if __name__ == "__main__":
    main()
