"""Work moto 5.2.5 repeats that gives the same result each time, done once for the emulation's lifetime.

- moto parses a state machine's ASL (ANTLR, then its preprocessor) when the machine is created, again for
  every execution, and again for every describe of the machine: 0.2 s or more each time on a small machine,
  about a quarter of a plain turn. The parsed program holds no state of an execution (that is in the
  execution's `Environment`), so each definition is parsed once per process and its program shared by the
  executions (and by the stacks a process starts one after another: the tests').
  One thing in it is written lazily: each component's `heap_key`, the key of its retry counters in an
  execution's heap. Two executions taking a fresh key for the same shared component at once could each
  keep a different one (a retrier's attempts then lost), so the key is now taken under a lock.
- Every request moto answers lists its response class's methods with `inspect.getmembers` to find the
  action's (a millisecond or two, on each of a turn's hundred-odd DynamoDB requests); the list of a class
  is kept after the first time.

And one race: moto lists a new execution before its worker thread gives it a status, and ListExecutions
then fails reading it (`None.value`). Such an execution is running, as StartExecution said: it lists so.
"""

from __future__ import annotations

import functools
import threading
from typing import Any
from unittest import mock

import moto.core.responses
from moto.stepfunctions.parser.asl.component.eval_component import EvalComponent
from moto.stepfunctions.parser.asl.parse.asl_parser import AmazonStateLanguageParser
from moto.stepfunctions.parser.backend.execution import Execution

_HEAP_KEY = "_EvalComponent__heap_key"  # the private attribute behind EvalComponent.heap_key
_ORIGINAL_PARSE = AmazonStateLanguageParser.parse
_PARSED: dict[str, tuple[Any, Any]] = {}  # definition: moto's parse of it


def patches() -> list[Any]:
    """The mock.patch objects to enter for the emulation's lifetime."""
    key_lock = threading.Lock()
    original_heap_key = EvalComponent.heap_key.fget
    assert original_heap_key is not None

    def parse_once(definition: str) -> tuple[Any, Any]:
        # A definition that does not parse raises each time, as before; two first parses of the same one
        # at once both parse, and the first kept is used from then on.
        if definition not in _PARSED:
            _PARSED.setdefault(definition, _ORIGINAL_PARSE(definition))
        return _PARSED[definition]

    def heap_key(component: EvalComponent) -> str:
        key: str | None = getattr(component, _HEAP_KEY, None)
        if key is None:
            with key_lock:
                key = original_heap_key(component)
        return key

    def status(execution: Execution) -> str:
        return "RUNNING" if execution.exec_status is None else str(execution.exec_status.value)

    return [
        mock.patch.object(AmazonStateLanguageParser, "parse", staticmethod(parse_once)),
        mock.patch.object(Execution, "status", property(status)),
        mock.patch.object(EvalComponent, "heap_key", property(heap_key)),
        mock.patch.object(
            moto.core.responses,
            "method_names_from_class",
            functools.cache(moto.core.responses.method_names_from_class),
        ),
    ]
