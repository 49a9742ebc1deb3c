"""The layer's Lambda entry point: the function's app.handler, imported with the collector paused."""

import json
import os
import subprocess
import sys
from pathlib import Path

from support.tools import ROOT

# What Lambda does on a cold start: the function's code directory first on sys.path, then the layer; the
# Handler's module imported by name. The fake app reports whether the collector ran while it was imported.
PROBE = """
import gc, json
import stepwise.lambda_entry as entry
import app
print(json.dumps({
    "same_handler": entry.handler is app.handler,
    "collector_during_import": app.COLLECTOR_ON,
    "collector_after": gc.isenabled(),
    "frozen": gc.get_freeze_count(),
}))
"""
APP = "import gc\nCOLLECTOR_ON = gc.isenabled()\n\ndef handler(event, context):\n    return {'ok': True}\n"


def run_entry(code_dir: Path, probe: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(code_dir), str(ROOT / "layers" / "core")])}
    return subprocess.run(
        [sys.executable, "-c", probe], env=env, capture_output=True, text=True, check=False, timeout=60
    )


def test_the_entry_is_the_apps_handler_imported_with_the_collector_paused_then_frozen(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text(APP)

    result = run_entry(tmp_path, PROBE)

    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["same_handler"] is True
    assert report["collector_during_import"] is False
    assert report["collector_after"] is True, "the collector runs again for the container's calls"
    assert report["frozen"] > 1000, "what the import built is out of the collector's generations"


def test_a_failing_import_fails_the_init_and_leaves_the_collector_running(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text("raise RuntimeError('broken settings')\n")
    probe = (
        "import gc\ntry:\n    import stepwise.lambda_entry\nexcept RuntimeError as error:\n"
        "    print(error, gc.isenabled())\n"
    )

    result = run_entry(tmp_path, probe)

    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "broken settings True"
