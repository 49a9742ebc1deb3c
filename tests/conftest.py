"""How `make test` shares the suite between two pytest-xdist workers (`-n 2 --dist loadgroup`): each group
runs on one worker in the order it has when run alone, so a file meets the same neighbours as in a serial run.

- `emulated`: the integration files that run the local emulation in this process (one moto, one clock and one
  session stack per process);
- `rest`: the unit, behaviour and contract tiers, `make chat`'s end-to-end tests (subprocesses), and the
  example notes server's tests (a server of its own, no emulation);
- the docs' examples (each a `make chat` subprocess of its own) go to one group and the other in turn: with
  them all in `emulated`, its tests took 343 s against the rest's 255 s (one run's JUnit times).
"""

from __future__ import annotations

import pytest

# Integration files that run no emulation in this process: their work is in subprocesses of their own
# (test_chat.py) or in servers of their own (test_example_accounts_server.py).
IN_THE_REST = {"test_chat.py", "test_example_accounts_server.py"}
SHARED = {"test_docs_examples.py"}  # subprocesses too: split between the groups


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    shared = 0
    for item in items:
        if item.path.name in SHARED:
            group = ("emulated", "rest")[shared % 2]
            shared += 1
        elif item.path.parent.name == "integration" and item.path.name not in IN_THE_REST:
            group = "emulated"
        else:
            group = "rest"
        item.add_marker(pytest.mark.xdist_group(group))
