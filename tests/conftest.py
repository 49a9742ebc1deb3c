"""How `make test` shares the suite between two pytest-xdist workers (`-n 2 --dist loadgroup`): each group
runs on one worker in the order it has when run alone, so a file meets the same neighbours as in a serial run.

- `emulated`: the integration files that run the local emulation in this process (one moto, one clock and one
  session stack per process), and the docs' examples (each a `make chat` subprocess);
- `rest`: the unit, behaviour and contract tiers, `make chat`'s end-to-end tests (subprocesses), and the
  example notes server's tests (a server of its own, no emulation).
"""

from __future__ import annotations

import pytest

# Integration files that run no emulation in this process: their work is in subprocesses of their own
# (test_chat.py) or in servers of their own (test_example_accounts_server.py).
IN_THE_REST = {"test_chat.py", "test_example_accounts_server.py"}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        in_process = item.path.parent.name == "integration" and item.path.name not in IN_THE_REST
        item.add_marker(pytest.mark.xdist_group("emulated" if in_process else "rest"))
