"""Cold imports counted in instructions: each function's import as a ratio to `import boto3`, without noise.

The wall-clock ratios of `cold_start.py` move by about a tenth between runs on a shared machine. valgrind's
callgrind counts the instructions a process executes, the same on every run (with PYTHONHASHSEED fixed), so a
change of a hundredth is visible. Each count is that of a fresh interpreter (only the function's directory and
the layer's `python/` on `sys.path`, the build's bytecode, as in `cold_start.py`; it imports the template's
Handler, `stepwise.lambda_entry`) minus that of an interpreter that imports nothing; each leaves before
Python's finalization, which Lambda never runs. Instructions are not time (the SDK's C code and Python's
bytecode loop run at different speeds, and file reads are not counted), so these figures complement the wall-
clock ones, not replace them.

Then each turn function's cold path as `cold_path.py` times it, counted the same way: its import and what its
first call of a plain turn builds (the settings, the clients, the tools' catalog...).

Needs valgrind (skipped with a message when it is absent); about 15 s per function. Run: make bench
(or BUILD_DIR=.aws-sam/bench .venv/bin/python benchmarks/cold_instructions.py)
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

# The same floor and targets as the wall-clock figures.
from cold_start import DEFAULT_TARGET, DEPLOYED_ENVIRONMENT, FLOOR, TARGETS  # noqa: E402

# Absolute, as the entries of Lambda's sys.path are (/var/task, /opt/python).
BUILD = Path(os.environ.get("BUILD_DIR", ROOT / ".aws-sam" / "build")).resolve()
ENTRY = "import stepwise.lambda_entry\n"  # the template's Handler: the function's app.handler
# Lambda never shuts an interpreter down: leave before Python's finalization (whose last collection traverses
# every object still tracked) so that it is not counted.
LEAVE = "\nimport os; os._exit(0)\n"
COLLECTED = re.compile(r"Collected : (\d+)")


def instructions(
    code: str,
    function_dir: Path | None = None,
    args: tuple[str, ...] = (),
    environment: dict[str, str] | None = None,
) -> int:
    """The instructions a fresh interpreter executes running `code` (with `function_dir` on its path, `args`
    as its arguments, and `environment` besides the deployed one)."""
    paths = ([str(function_dir)] if function_dir else []) + [str(BUILD / "CoreLayer" / "python")]
    env = {
        "PATH": os.environ.get("PATH", ""),
        "PYTHONPATH": os.pathsep.join(paths),
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONHASHSEED": "0",
        "AWS_DEFAULT_REGION": "us-east-1",
        **DEPLOYED_ENVIRONMENT,
        **(environment or {}),
    }
    out = subprocess.run(  # noqa: S603 (valgrind on our own interpreter)
        [  # noqa: S607 (valgrind from PATH, checked by main)
            "valgrind",
            "--tool=callgrind",
            "--callgrind-out-file=/dev/null",
            sys.executable,
            "-S",
            "-s",
            "-c",
            code + LEAVE,
            *args,
        ],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    found = COLLECTED.search(out.stderr)
    if found is None:
        raise SystemExit(f"callgrind printed no count:\n{out.stderr[-2000:]}")
    return int(found.group(1))


def main() -> None:
    if shutil.which("valgrind") is None:
        print("valgrind is not installed: no instruction counts (apt install valgrind)")
        return
    if not (BUILD / "CoreLayer" / "python").is_dir():
        raise SystemExit(f"no build in {BUILD}: run `make build` first")
    empty = instructions("pass")
    boto3 = instructions("import boto3") - empty
    print(f"baseline: import boto3, {boto3:,} instructions (interpreter start-up subtracted)")
    print(f"{'import':<46}{'ratio':>8}{'target':>8}")
    floor = (instructions(FLOOR) - empty) / boto3
    print(f"{'floor: boto3, Powertools Logger, a pydantic model':<46}{floor:>7.3f}x{DEFAULT_TARGET:>7.1f}x")
    for function_dir in sorted(p for p in BUILD.iterdir() if (p / "app.py").is_file()):
        ratio = (instructions(ENTRY, function_dir) - empty) / boto3
        target = TARGETS.get(function_dir.name, DEFAULT_TARGET)
        verdict = "ok" if ratio <= target else "OVER"
        print(f"{function_dir.name:<46}{ratio:>7.3f}x{target:>7.1f}x  {verdict}")
    first_calls(empty, boto3)


def first_calls(empty: int, boto3: int) -> None:
    """Each turn function's cold path as `cold_path.py` times it (its import, then what its first call of a
    plain turn builds), counted: the import, the first-call setup, and both."""
    import cold_path  # the turn's stack and its settings (imported here: it loads the local emulation)

    print(f"\nthe cold path, as cold_path.py runs it ({len(cold_path.INPUTS) + 1} functions)")
    print(f"{'function':<30}{'import':>8}{'setup':>8}{'both':>8}")
    for name in ["WebhookFunction", *cold_path.INPUTS]:
        function_dir = BUILD / name
        args = (name, cold_path.INPUTS.get(name, ""))
        both = instructions(cold_path.SNIPPET, function_dir, args, cold_path.ENV) - empty
        alone = instructions(ENTRY, function_dir, environment=cold_path.ENV) - empty
        print(f"{name:<30}{alone / boto3:>7.3f}x{(both - alone) / boto3:>7.3f}x{both / boto3:>7.3f}x")


if __name__ == "__main__":
    main()
