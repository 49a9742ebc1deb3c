"""Cold-start import cost of each function, with and without compiled bytecode.

Lambda's code directory is read-only, so a layer shipped without .pyc files is compiled again at every cold
start. This prints, per function, the median time to import its handler in a fresh interpreter: once with
no bytecode available (and none written), once with bytecode already compiled. For CallModel it also times
`import anthropic`, which happens on the first model call. Run: make bench
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RUNS = 5
SNIPPET = """
import importlib.util, sys, time
start = time.perf_counter()
spec = importlib.util.spec_from_file_location("app", sys.argv[1])
module = importlib.util.module_from_spec(spec); spec.loader.exec_module(module)
middle = time.perf_counter()
if sys.argv[2] == "anthropic":
    import anthropic
print(f"{middle - start:.4f} {time.perf_counter() - middle:.4f}")
"""


def time_import(app: Path, cache: str, write: bool, extra: str) -> tuple[float, float]:
    env = {
        **{k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"},
        "PYTHONPATH": str(ROOT / "layers" / "core"),
        "PYTHONPYCACHEPREFIX": cache,
        "POWERTOOLS_SERVICE_NAME": "stepwise",
        "AWS_DEFAULT_REGION": "us-east-1",
    }
    flags = [] if write else ["-B"]
    out = subprocess.run(  # noqa: S603 (our own interpreter and snippet)
        [sys.executable, *flags, "-c", SNIPPET, str(app), extra],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    return float(out[0]), float(out[1])


def main() -> None:
    print(
        f"{'function':<18}{'import, no .pyc':>17}{'import, .pyc':>14}{'+anthropic, no .pyc':>21}"
        f"{'+anthropic, .pyc':>18}"
    )
    for app in sorted((ROOT / "functions").glob("*/app.py")):
        extra = "anthropic" if app.parent.name == "call_model" else ""
        with tempfile.TemporaryDirectory() as warm:
            time_import(app, warm, write=True, extra=extra)  # compile once into the warm cache
            cold = [time_import(app, tempfile.mkdtemp(), write=False, extra=extra) for _ in range(RUNS)]
            hot = [time_import(app, warm, write=False, extra=extra) for _ in range(RUNS)]
        row = [
            statistics.median(r[0] for r in cold),
            statistics.median(r[0] for r in hot),
            statistics.median(r[1] for r in cold),
            statistics.median(r[1] for r in hot),
        ]
        cells = [f"{v * 1000:.0f} ms" for v in row]
        if not extra:
            cells[2] = cells[3] = "-"
        print(f"{app.parent.name:<18}{cells[0]:>17}{cells[1]:>14}{cells[2]:>21}{cells[3]:>18}")
    print(f"(median of {RUNS} fresh interpreters each; Python {sys.version.split()[0]} on this machine)")


if __name__ == "__main__":
    main()
