"""Behaviour tests: the webhook, the turn's loop in code and the in-memory stores in one process (see
support.memory_stack). Each test gets a stack of its own."""

from __future__ import annotations

import pytest
from support.memory_stack import MemoryStack


@pytest.fixture
def stack() -> MemoryStack:
    return MemoryStack()
