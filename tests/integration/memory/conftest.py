"""Fixtures for the AWS memory adapters, tested against the real API shapes with botocore's Stubber."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from botocore.stub import Stubber


@pytest.fixture(autouse=True)
def fake_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    """Credentials that sign requests the Stubber intercepts before they leave the process."""
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_SESSION_TOKEN", "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.delenv("AWS_PROFILE", raising=False)


@pytest.fixture
def stubber(client: Any) -> Iterator[Stubber]:
    """A Stubber on the test module's `client` fixture; every queued response must be used."""
    with Stubber(client) as stub:
        yield stub
        stub.assert_no_pending_responses()
