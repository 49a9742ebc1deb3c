"""What a turn function's cold import leaves out, so that the savings of docs/measurements.md ("Cold imports
back under 1.6x") do not come back unnoticed: modules that only a rare update or a rare turn needs are loaded
by the code that needs them, and the records the cold path defines are `Record`s, not NamedTuples or
dataclasses.

Each function's handler is imported in a fresh interpreter, as Lambda imports it;
`benchmarks/cold_instructions.py` measures what the import costs.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from support.fresh_python import run_clean

ROOT = Path(__file__).resolve().parents[2]
TURN_FUNCTIONS = ("webhook", "load_context", "call_model", "run_tools", "finish_turn")
# module -> the functions whose import must not load it (what loads it instead)
RARE = {
    "stepwise.history.forwarded": TURN_FUNCTIONS,  # the webhook, for a forwarded message
    "stepwise.telegram.topic_events": TURN_FUNCTIONS,  # the webhook, for a topic's service message
    "stepwise.telegram.keyboard": ("webhook", "load_context", "call_model", "finish_turn"),  # /app's reply
    "stepwise.states.typing_indicator": ("call_model",),  # after a tool round
    "stepwise.states.recovery": TURN_FUNCTIONS,  # RecoverChat
}

PROBE = textwrap.dedent(
    """
    import dataclasses, json, sys, typing
    from pathlib import Path

    made = []
    real_namedtuple, real_process = typing.NamedTupleMeta.__new__, dataclasses._process_class
    def namedtuple(cls, name, bases, namespace, **kwargs):
        made.append(f"{namespace.get('__module__')}.{name} (NamedTuple)")
        return real_namedtuple(cls, name, bases, namespace, **kwargs)
    def dataclass(cls, *args, **kwargs):
        made.append(f"{cls.__module__}.{cls.__name__} (dataclass)")
        return real_process(cls, *args, **kwargs)
    typing.NamedTupleMeta.__new__, dataclasses._process_class = namedtuple, dataclass
    sys.path.insert(0, sys.argv[1])
    import app  # noqa: F401
    stepwise = sorted(name for name in sys.modules if name.startswith("stepwise"))
    print(json.dumps({"modules": stepwise, "records": [m for m in made if m.startswith("stepwise")]}))
    """
)


def cold_import(function: str) -> dict[str, list[str]]:
    """The `stepwise` modules loaded, and the NamedTuples and dataclasses defined, by `function`'s import."""
    loaded: dict[str, list[str]] = json.loads(
        run_clean(PROBE, str(ROOT / "functions" / function)).splitlines()[-1]
    )
    return loaded


@pytest.fixture(scope="module")
def imports() -> dict[str, dict[str, list[str]]]:
    return {function: cold_import(function) for function in TURN_FUNCTIONS}


@pytest.mark.parametrize("function", TURN_FUNCTIONS)
def test_a_turn_functions_cold_import_leaves_out_what_only_a_rare_path_needs(
    function: str, imports: dict[str, dict[str, list[str]]]
) -> None:
    loaded = set(imports[function]["modules"])
    assert "stepwise.runtime" in loaded, "the probe imported the handler"
    assert [module for module, functions in RARE.items() if function in functions and module in loaded] == []


@pytest.mark.parametrize("function", ("webhook", "load_context", "call_model", "finish_turn"))
def test_the_records_a_cold_import_defines_are_records_not_namedtuples_or_dataclasses(
    function: str, imports: dict[str, dict[str, list[str]]]
) -> None:
    assert imports[function]["records"] == []
