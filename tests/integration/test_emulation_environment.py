"""A function's environment on the local stack: Python code sees it as Lambda's, and the process's C
environment is never written while the stack runs (setenv beside threads reading it can crash the process)."""

from __future__ import annotations

import ctypes
import os

from support.stack import Stack

_libc = ctypes.CDLL(None)
_libc.getenv.restype = ctypes.c_char_p


def c_getenv(name: str) -> str | None:
    """The variable as C code reads it (getenv), not as os.environ holds it."""
    value = _libc.getenv(name.encode())
    return value.decode() if value is not None else None


def test_a_functions_environment_is_pythons_to_read_and_never_set_in_the_c_environment(stack: Stack) -> None:
    # Given a function of the stack and a variable of its own environment the host's does not have
    spec = stack.emulation.functions["CallModelFunction"]
    name, value = "MESSAGES_TABLE", stack.emulation.function_env(spec)["MESSAGES_TABLE"]
    assert c_getenv(name) is None
    # When it runs (its environment in place, as during an invocation)
    with stack.emulation._environment(spec):
        # Then Python reads its environment whichever way it asks, and C code never sees it set
        assert os.environ[name] == value and os.getenv(name) == value
        assert c_getenv(name) is None
    assert name not in os.environ
