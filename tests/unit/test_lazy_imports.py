"""What a function imports only for the turns that use it stays out of its cold start (docs/performance)."""

import json
import os
import subprocess
import sys

import pytest
from support.tools import ROOT

# A state's handler module, and modules that only some of its turns use.
ONLY_SOME_TURNS = {
    "call_model": [
        "stepwise.media.fetch",  # a window that holds a photo or a document
        "stepwise.states.job_turn",  # a background job's turns
        "stepwise.audit.log",  # a turn past its tool-round limit
    ],
}


@pytest.mark.parametrize(("function", "modules"), ONLY_SOME_TURNS.items())
def test_a_handlers_import_leaves_what_only_some_turns_use(function: str, modules: list[str]) -> None:
    probe = f"import sys, json, app\nprint(json.dumps([m for m in {modules!r} if m in sys.modules]))"
    paths = [str(ROOT / "functions" / function), str(ROOT / "layers" / "core")]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(paths), "POWERTOOLS_SERVICE_NAME": "stepwise"}

    result = subprocess.run(
        [sys.executable, "-c", probe], env=env, capture_output=True, text=True, check=False, timeout=60
    )

    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == []
