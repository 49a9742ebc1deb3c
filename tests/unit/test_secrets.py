"""Secrets come from the environment, or from SSM when only a parameter name is set."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import SecretStr

from stepwise.aws import secrets


def test_a_value_in_the_environment_wins_over_the_parameter() -> None:
    assert secrets.resolve_secret(SecretStr("direct"), "/x/y", "TOKEN", 300) == "direct"


def test_the_parameter_is_read_decrypted_and_cached(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[dict[str, Any]] = []

    def fake_get_parameter(name: str, **kwargs: Any) -> str:
        calls.append({"name": name, **kwargs})
        return "from-ssm\n"

    from aws_lambda_powertools.utilities import parameters

    monkeypatch.setattr(parameters, "get_parameter", fake_get_parameter)
    assert secrets.resolve_secret(None, "/stepwise/token", "TOKEN", 120) == "from-ssm"
    assert calls == [{"name": "/stepwise/token", "decrypt": True, "max_age": 120}]


def test_neither_value_nor_parameter_is_a_clear_error() -> None:
    with pytest.raises(secrets.MissingSecretError, match="TOKEN_PARAMETER"):
        secrets.resolve_secret(None, None, "TOKEN", 300)
