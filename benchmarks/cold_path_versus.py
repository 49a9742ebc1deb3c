"""The cold path of this checkout against another one's (an earlier commit, say), sample by sample.

`cold_path.py` run once per checkout compares two runs, each against its own `import boto3`; on a busy
machine that baseline moves by a third between runs, more than the change being measured. Here every sample
runs the other build and this one back to back (in alternating order), per function, so what loads the
machine loads both alike, and the figure is the median of the ratios: this checkout's init + first-call setup
over the other's, per function, and for the first draft after a quiet spell without warm-ups (the webhook,
LoadContext and CallModel cold, in series). Each checkout's own `benchmarks/cold_path.py` measures its own
build (what a first call sets up is named differently in different commits).

Both builds must exist, made the same way (x86_64, botocore trimmed, bytecode compiled), for example:
    git worktree add ../before <commit>
    (cd ../before && sam build --build-dir .aws-sam/bench --parameter-overrides Architecture=x86_64 &&
     python scripts/trim_botocore.py .aws-sam/bench &&
     python -m compileall -q -j 0 --invalidation-mode unchecked-hash .aws-sam/bench)
    (the same here), then: .venv/bin/python benchmarks/cold_path_versus.py ../before
Set RUNS (default 11) for more samples. A checkout against itself gives about 1.00 +- 0.03 here.
"""

from __future__ import annotations

import importlib.util
import os
import statistics
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent
RUNS = int(os.environ.get("RUNS", "11"))
FIRST_DRAFT = ("WebhookFunction", "LoadContextFunction", "CallModelFunction")
FUNCTIONS = (*FIRST_DRAFT, "FinishTurnFunction")


def load(name: str, checkout: Path) -> ModuleType:
    """A checkout's cold_path benchmark, measuring that checkout's bench build."""
    spec = importlib.util.spec_from_file_location(name, checkout / "benchmarks" / "cold_path.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.BUILD = (checkout / ".aws-sam" / "bench").resolve()
    if not module.BUILD.is_dir():
        raise SystemExit(f"no build at {module.BUILD}: build it first (see this script's docstring)")
    return module


def main() -> None:
    if len(sys.argv) != 2:
        raise SystemExit("usage: cold_path_versus.py OTHER_CHECKOUT")
    other = load("cold_path_other", Path(sys.argv[1]).resolve())
    this = load("cold_path_this", ROOT)
    ratios: dict[str, list[float]] = {function: [] for function in FUNCTIONS}
    drafts: list[float] = []
    for run in range(RUNS):
        draft = {"other": 0.0, "this": 0.0}
        for function in FUNCTIONS:
            order = [("other", other), ("this", this)]
            seconds = {}
            for side, module in order if run % 2 == 0 else order[::-1]:
                init, setup, _ = module.fresh(function)
                seconds[side] = init + setup
                if function in FIRST_DRAFT:
                    draft[side] += init + setup
            ratios[function].append(seconds["this"] / seconds["other"])
        drafts.append(draft["this"] / draft["other"])
    print(f"this checkout over {sys.argv[1]}: init + first-call setup, median of {RUNS} paired samples")
    for function, values in ratios.items():
        print(f"{function:<26}{statistics.median(values):6.3f}")
    samples = " ".join(f"{value:.3f}" for value in drafts)
    print(f"{'first draft, no warm-ups':<26}{statistics.median(drafts):6.3f}   (samples: {samples})")


if __name__ == "__main__":
    main()
