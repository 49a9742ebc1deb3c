"""Contract-test fixtures."""

from __future__ import annotations

import pytest
from support.tools import tool


@pytest.fixture(scope="session")
def sam() -> str:
    """The AWS SAM CLI (it lives in its own virtual environment)."""
    return tool("sam", "SAM_CLI", ".venv-sam")
