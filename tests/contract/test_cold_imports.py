"""What a turn function's cold start leaves out: the whole subsystems that only a rare turn or another
function uses (the MCP SDK, voice, the offline rules model, background jobs, recovery, the Mini App,
secretary mode, people's accounts' OAuth). Each is imported by the code that needs it, because a person
waits for every module the webhook, LoadContext and CallModel import before the first draft after a quiet
hour (docs/measurements.md).

Each function's handler is imported in a fresh interpreter, as Lambda imports it.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from support.fresh_python import run_clean

ROOT = Path(__file__).resolve().parents[2]
TURN_FUNCTIONS = ("webhook", "load_context", "call_model", "run_tools", "request_approval", "finish_turn")
# subsystem -> the modules that make it up (a package's prefix, or one module)
RARE = {
    "the MCP SDK": ("mcp", "stepwise.mcp", "stepwise.remote_tools.mcp_client"),
    "voice": ("stepwise.voice", "stepwise.states.voice_turn", "stepwise.states.voice_reply"),
    "the offline rules model": ("stepwise.offline", "stepwise.memory.extractive"),
    "background jobs": ("stepwise.states.job_turn", "stepwise.states.job_report"),
    "recovery": ("stepwise.states.recovery",),
    "the Mini App": ("stepwise.miniapp",),
    "secretary mode": (
        "stepwise.secretary.connections",
        "stepwise.secretary.dynamodb",
        "stepwise.secretary.intake",
        "stepwise.secretary.sending",
        "stepwise.states.secretary_turn",
        "stepwise.states.secretary_budget",
        "stepwise.tools.secretary_tools",
    ),
    "people's accounts' OAuth and cipher": ("stepwise.accounts.flow", "stepwise.accounts.cipher"),
}

PROBE = textwrap.dedent(
    """
    import json, sys
    sys.path.insert(0, sys.argv[1])
    import app  # noqa: F401
    print(json.dumps(sorted(sys.modules)))
    """
)


def cold_modules(handler_dir: Path) -> set[str]:
    """Every module loaded by importing `handler_dir`'s `app` in a fresh interpreter."""
    return set(json.loads(run_clean(PROBE, str(handler_dir)).splitlines()[-1]))


def rare_subsystems_in(modules: set[str]) -> dict[str, list[str]]:
    """The rare subsystems `modules` holds a module of, with those modules."""
    found = {
        subsystem: sorted(m for m in modules if any(m == p or m.startswith(p + ".") for p in prefixes))
        for subsystem, prefixes in RARE.items()
    }
    return {subsystem: names for subsystem, names in found.items() if names}


@pytest.mark.parametrize("function", TURN_FUNCTIONS)
def test_a_turn_functions_cold_start_loads_no_rare_subsystem(function: str) -> None:
    loaded = cold_modules(ROOT / "functions" / function)
    assert "stepwise.runtime" in loaded, "the probe imported the handler"
    assert rare_subsystems_in(loaded) == {}


def test_the_check_finds_a_rare_subsystem_a_handler_loads(tmp_path: Path) -> None:
    handler = "import stepwise.states.load_context\nimport stepwise.states.voice_turn\n"
    (tmp_path / "app.py").write_text(handler)
    found = rare_subsystems_in(cold_modules(tmp_path))
    assert set(found) == {"voice"}
    assert "stepwise.states.voice_turn" in found["voice"]
