"""The cold path: what a turn after a quiet spell adds, with every container gone, before its first draft and
before its reply, in units of `import boto3` measured in the same run.

Measured, in fresh interpreters on the build (`make build`'s output, BUILD_DIR; no site-packages, the build's
bytecode, as Lambda loads it), for each function the turn uses:
- init: importing the template's Handler, `stepwise.lambda_entry`, which imports the function's `app.handler`
  with the garbage collector paused (Lambda's init phase);
- first-call setup: what its first invocation of a plain turn builds before its first request, on top of a
  warm invocation: the runtime's settings and SDK clients, the validators of the event model and of the
  models the first call uses (pydantic builds them on first use: each handler module's FIRST_CALL_MODELS,
  the webhook's WEBHOOK_MODELS below), the inbox, the Bot API client, memory's clients (LoadContext),
  CallModel's model client, the tools' catalog with their schemas for the API (CallModel, RunTools), and the
  HTTP pools of the Bot API and model clients with their TLS context (certifi's bundle, read once per
  process), and rendering a reply to Telegram HTML (CallModel's first draft, FinishTurn's reply). This is
  also what a warm-up prepares (`stepwise.warmups.event`). Not counted: anything else a
  first call does only once that this list misses (found by hand, by tracing which models a plain turn uses).
Measured on the local emulation, warm: each state's own handler CPU and its AWS and Telegram requests, per
kind of turn (a plain answer, one tool round, an approval).
Modelled: 8 ms per AWS request and 50 ms per Telegram request (as benchmarks/turn_cost.py), 1 s for the model
(the same warm or cold: it adds nothing), and the order the states run in (the ASL's, for each kind).

Two ways to run a cold turn are compared: no warm-ups (every state pays its init and setup when it is reached,
one after the other) and warm-ups (the webhook, new after the quiet spell, starts CallModel's and FinishTurn's
containers, and RunTools' for a tool-like message, as soon as it has its settings, the update and a Lambda
client, before it builds the inbox and takes the chat's lease; each then initializes while the webhook and
LoadContext work). A warm-up helps only if its container is ready when the real call arrives; otherwise the
call starts a container of its own and pays the whole init (Lambda starts a new one when all are busy,
initializing included). The window CallModel has is the rest of the webhook's setup and its handler, then
LoadContext's init, setup and handler; two windows are printed: with their modelled request time ("I/O") and
without it ("CPU only", the cautious one). The warm-up's own trip (an async Invoke) is not modelled, nor Step
Functions' time to invoke each state.

Run: make bench (or BUILD_DIR=.aws-sam/bench .venv/bin/python benchmarks/cold_path.py)
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "layers" / "core"), str(ROOT), str(ROOT / "benchmarks")]

from cold_start import DEPLOYED_ENVIRONMENT, LAMBDA_CREDENTIALS  # noqa: E402
from turn_cost import (  # noqa: E402
    AWS_REQUEST_SECONDS,
    TELEGRAM_SECONDS,
    Invocation,
    Meter,
    bench_stack,
    press_approve,
)

from stepwise_local import updates  # noqa: E402
from stepwise_local.anthropic_server import text, tool_use  # noqa: E402

# Absolute, as the entries of Lambda's sys.path are (/var/task, /opt/python).
BUILD = Path(os.environ.get("BUILD_DIR", ROOT / ".aws-sam" / "build")).resolve()
RUNS = int(os.environ.get("BENCH_RUNS", "7"))
USER = 5151
TARGET_DRAFT, TARGET_REPLY = 4.0, 5.0  # issue 22: a plain turn, in units of `import boto3`
MODEL_SECONDS = 1.0  # modelled: the model's answer (the same warm or cold)
HUMAN_SECONDS = 5.0  # modelled: the user reading the approval request before the press
INPUTS = {
    "LoadContextFunction": "stepwise.states.contracts.load_context:LoadContextInput",
    "CallModelFunction": "stepwise.states.contracts.call_model:CallModelInput",
    "RunToolsFunction": "stepwise.states.contracts.run_tools:RunToolsInput",
    "RequestApprovalFunction": "stepwise.states.contracts.request_approval:RequestApprovalInput",
    "FinishTurnFunction": "stepwise.states.contracts.finish_turn:FinishTurnInput",
}
# The settings a first call needs without a request: secrets given directly, names of the deployed tools.
ENV = {
    "AWS_DEFAULT_REGION": "us-east-1",
    **LAMBDA_CREDENTIALS,
    **DEPLOYED_ENVIRONMENT,
    "POWERTOOLS_SERVICE_NAME": "stepwise",
    "TELEGRAM_BOT_TOKEN": "1:bench",
    "TELEGRAM_WEBHOOK_SECRET": "bench",
    "ANTHROPIC_API_KEY": "sk-bench",
    "ALLOWED_USER_IDS": "1",
    "STATE_MACHINE_ARN": "arn:aws:states:us-east-1:123456789012:stateMachine:bench-turn",
    "REMINDER_TARGET_ARN": "arn:aws:lambda:us-east-1:123456789012:function:bench",
    "VECTOR_BUCKET_NAME": "bench",
    "CONNECTIONS_TABLE": "bench-connections",  # deployed with the stack (the /mcp endpoint, background jobs)
    "JOBS_TABLE": "bench-jobs",
    # the webhook's warm-up targets (the template sets them)
    "CALL_MODEL_FUNCTION": "bench-call-model",
    "FINISH_TURN_FUNCTION": "bench-finish-turn",
    "RUN_TOOLS_FUNCTION": "bench-run-tools",
}
# The models the webhook's first call of a plain turn validates or writes besides the update (a state's own
# list is its handler module's FIRST_CALL_MODELS, which its warm-up builds).
WEBHOOK_MODELS = (
    "stepwise.inbox.models:QueuedMessage",
    "stepwise.turn.start:TurnStart",
    "stepwise.webhook:WebhookOutcome",
)
SNIPPET = (
    f"WEBHOOK_MODELS = {WEBHOOK_MODELS!r}\n"
    + """
import sys, time
mode = sys.argv[1]
start = time.perf_counter()
if mode != "boto3":
    import stepwise.lambda_entry  # the template's Handler: the function's app.handler, the collector paused
    module = sys.modules["app"]
else:
    import boto3
middle = time.perf_counter()
after = middle
if mode != "boto3":
    # Deployed, every function reads its secrets from SSM through Powertools' Parameters (here they are given
    # directly, so that no request is made): its first call imports the utility.
    from aws_lambda_powertools.utilities import parameters
if mode == "WebhookFunction":
    from stepwise.aws.events import HttpRequest
    from stepwise.runtime import get_runtime
    from stepwise.telegram.models import Update
    runtime = get_runtime()
    runtime.webhook_services
    HttpRequest.model_validate({"headers": {}, "body": "{}"})
    Update.model_validate({"update_id": 1})
    runtime.warmups.invoke.client.client  # made now: the warm-ups leave once the Lambda client exists
    after = time.perf_counter()
    runtime.sequencer  # the admission's inbox and starter: built after the warm-ups of a quiet stack left
    from stepwise.lambda_support import build_models
    build_models(WEBHOOK_MODELS)  # what its first call validates and writes besides the update
elif mode != "boto3":
    from stepwise.runtime import get_runtime
    from stepwise.lambda_support import build_models
    runtime = get_runtime()
    services = runtime.turn_services
    # the event model's validator and those its first call builds (a warm-up builds them)
    build_models([sys.argv[2], *module.FIRST_CALL_MODELS])
    # What each state's first call builds on a plain turn besides: the inbox and its lease, the Bot API
    # client (not LoadContext's: the webhook's answer showed "typing…"), memory's clients (recall), the
    # model's client, the tools' catalog.
    if mode in ("LoadContextFunction", "FinishTurnFunction"):
        services.outbound.sequencer()
    if mode not in ("RunToolsFunction", "LoadContextFunction"):
        telegram = services.outbound.telegram()
        if hasattr(telegram._http, "pool"):  # over urllib3: its pool and the TLS context (certifi's bundle)
            telegram._http.pool()
    if mode == "LoadContextFunction":
        runtime.memory
    if mode == "CallModelFunction":
        services.tools.registry.api_tools()  # the catalog its first call offers the model, with their schemas
        if services.outbound.drafts is not None:
            services.outbound.drafts()
        model = runtime.model
        if callable(getattr(model, "_sdk", None)):  # the SDK adapter, before issue 22
            model._sdk()
        elif callable(getattr(model, "_http", None)):  # the lean client over requests
            model._http()
        else:  # the lean client over urllib3: its pool
            model._http.pool()
    if mode in ("CallModelFunction", "FinishTurnFunction"):
        # the first draft (CallModel) and the reply (FinishTurn) are rendered to Telegram HTML before they
        # are sent: the Markdown converter, wherever it is imported (at the top since issue 40, else on use)
        from stepwise.telegram.formatting import render_reply
        render_reply("**Hi.**")
    if mode == "RunToolsFunction":
        # the catalog and its arguments' validators (as its warm-up builds them)
        services.tools.registry.api_tools()
        services.tools.registry.parse("add_task", {"title": "milk"})
end = time.perf_counter()
print(f"{middle - start:.5f} {end - middle:.5f} {end - after:.5f}")
"""
)


def fresh(mode: str) -> tuple[float, float, float]:
    """(init seconds, first-call setup seconds, the part of the setup after the warm-ups leave: the webhook's
    only) of one function in a fresh interpreter (`boto3`: the baseline)."""
    function_dir = BUILD / mode
    paths = ([str(function_dir)] if mode != "boto3" else []) + [str(BUILD / "CoreLayer" / "python")]
    env = {
        "PATH": os.environ.get("PATH", ""),
        "PYTHONPATH": os.pathsep.join(paths),
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    args = [
        sys.executable,
        "-S",
        "-s",
        "-c",
        SNIPPET,
        mode,
        INPUTS.get(mode, ""),
    ]
    out = subprocess.run(args, env={**env, **ENV}, capture_output=True, text=True, check=True)  # noqa: S603
    init, setup, after = out.stdout.split()
    return float(init), float(setup), float(after)


def cold_parts(functions: list[str]) -> tuple[dict[str, tuple[float, float, float]], float]:
    """Median (init, setup, setup after the warm-ups leave) seconds per function and the median `import
    boto3`, alternated run by run."""
    samples: dict[str, list[tuple[float, float, float]]] = defaultdict(list)
    baseline: list[float] = []
    for _ in range(RUNS):
        for function in functions:
            baseline.append(fresh("boto3")[0])
            samples[function].append(fresh(function))
    parts = {
        f: (
            statistics.median(s[0] for s in runs),
            statistics.median(s[1] for s in runs),
            statistics.median(s[2] for s in runs),
        )
        for f, runs in samples.items()
    }
    return parts, statistics.median(baseline)


def handler_seconds(call: Invocation, with_io: bool) -> float:
    """A warm invocation's time: its own CPU, and (with_io) its modelled requests."""
    seconds = call.cpu - call.emulated
    if with_io:
        seconds += AWS_REQUEST_SECONDS * call.aws_requests + TELEGRAM_SECONDS * call.telegram_requests
    return seconds


def warm_turns() -> dict[str, list[list[Invocation]]]:
    """The states of each kind of turn, in the order they ran, played warm on the emulation."""
    meter = Meter({}, 0.0)
    meter.install()
    plays: dict[str, list[list[Invocation]]] = defaultdict(list)
    with bench_stack(meter, USER, {"WarmupAfterQuietSeconds": "0"}) as (emulation, telegram, anthropic):
        task = 0
        for run in range(2 + RUNS):
            for kind in ("plain", "one tool round", "approval"):
                before = len(meter.invocations)
                if kind == "plain":
                    anthropic.script(text("Hi."))
                elif kind == "one tool round":
                    task += 1
                    anthropic.script(tool_use(("add_task", {"title": "bench"})), text("Added."))
                else:
                    anthropic.script(tool_use(("delete_task", {"task_id": task})), text("Deleted."))
                update = updates.text_message(USER, {"plain": "hello"}.get(kind, "a task"))
                emulation.post_update(update)
                if kind == "approval":
                    press_approve(emulation, telegram, USER)
                emulation.wait_for_update(USER, update["update_id"])
                emulation.wait_idle(USER)
                if run >= 2:
                    plays[kind].append(meter.invocations[before:])
    return plays


def added(
    calls: list[tuple[str, float]], parts: dict[str, tuple[float, float, float]], warmed: set[str]
) -> tuple[float, float]:
    """(seconds added before the first draft, before the reply) by cold containers along `calls` (each state
    as it ran, with its warm handler time; the webhook first). Without warm-ups each function's first call
    pays init + setup; with them a warmed function pays nothing if its container was ready when the call came,
    else its whole init + setup (the call starts a container of its own). The warm-ups leave from the
    webhook once it has its settings, the update and its Lambda client, before it builds the inbox and takes
    the chat's lease (every container was gone: the webhook's own was new)."""
    draft = reply = 0.0
    seen: set[str] = set()
    clock = 0.0  # since the warm-ups left: the turn's own progress (its cold parts and handlers)
    drafted = False
    for position, (function, handler) in enumerate(calls):
        cost = 0.0
        if function not in seen:
            seen.add(function)
            init, setup, after = parts[function]
            ready = function in warmed and clock >= init + setup
            cost = 0.0 if ready else init + setup
            if position == 0:  # the webhook: only what follows the warm-ups' departure is in their window
                clock += after + handler
        elif function == "WebhookFunction":
            clock += HUMAN_SECONDS  # a second webhook call is the user's press on Approve
        if position > 0:
            clock += cost + handler + (MODEL_SECONDS if function == "CallModelFunction" else 0.0)
        reply += cost
        if not drafted:
            draft += cost
        drafted = drafted or function == "CallModelFunction"
    return draft, reply


def main() -> None:
    if not (BUILD / "CoreLayer" / "python").is_dir():
        raise SystemExit(f"no build in {BUILD}: run `make build` first")
    functions = ["WebhookFunction", *INPUTS]
    parts, boto3_seconds = cold_parts(functions)
    print(
        f"baseline: import boto3 {boto3_seconds * 1000:.0f} ms "
        f"(median of {RUNS * len(functions)} in this run)"
    )
    print(f"{'function':<26}{'init':>8}{'setup':>8}{'cold':>8}   (units of import boto3; measured)")
    for function in functions:
        init, setup, _ = parts[function]
        print(
            f"{function:<26}{init / boto3_seconds:>7.2f}x{setup / boto3_seconds:>7.2f}x"
            f"{(init + setup) / boto3_seconds:>7.2f}x"
        )
    plays = warm_turns()
    print(
        "\nadded by cold containers, in units of import boto3 "
        "(model time excluded: it is the same warm or cold)"
    )
    print(f"{'kind of turn':<16}{'warm-ups':<10}{'window':<10}{'first draft':>12}{'reply':>8}")
    for kind, samples in plays.items():
        runs = [[c for c in sample if c.function in parts] for sample in samples]  # (warm-ups are off here)
        functions_run = [c.function for c in runs[-1]]
        warmed = {"CallModelFunction", "FinishTurnFunction"} | (
            {"RunToolsFunction"} if kind != "plain" else set()
        )
        for label, warm, window, with_io in (
            ("none", set(), "-", True),
            ("yes", warmed, "I/O", True),
            ("yes", warmed, "CPU only", False),
        ):
            calls = [
                (
                    function,
                    statistics.median(handler_seconds(run[i], with_io) for run in runs if len(run) > i),
                )
                for i, function in enumerate(functions_run)
            ]
            draft, reply = added(calls, parts, warm)
            print(
                f"{kind:<16}{label:<10}{window:<10}"
                f"{draft / boto3_seconds:>11.2f}x{reply / boto3_seconds:>7.2f}x"
            )
    print(
        f"target, a plain turn after a quiet spell: at most {TARGET_DRAFT:.0f}x before the first draft, "
        f"{TARGET_REPLY:.0f}x before the reply"
    )


if __name__ == "__main__":
    main()
