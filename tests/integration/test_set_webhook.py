"""`make webhook` calls setWebhook with the stack's URL, the secret token and the handled update types."""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from types import ModuleType

import boto3
import pytest
from moto import mock_aws
from support.tools import ROOT

from stepwise.webhook import HANDLED_UPDATES
from stepwise_local.telegram_server import FakeBotApi

TOKEN = "987654:deploy-token"


def load_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("set_webhook", ROOT / "scripts" / "set_webhook.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def aws(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for name in ("TELEGRAM_BOT_TOKEN", "TELEGRAM_WEBHOOK_SECRET"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    with mock_aws():
        yield


def test_set_webhook_reads_the_secrets_from_ssm_and_registers_the_url(
    aws: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    ssm = boto3.client("ssm")
    ssm.put_parameter(Name="/set-webhook-test/token", Value=TOKEN, Type="SecureString")
    ssm.put_parameter(Name="/set-webhook-test/secret", Value="hook-secret_1", Type="SecureString")
    script = load_script()
    url = "https://abc123.execute-api.eu-west-1.amazonaws.com/webhook"
    monkeypatch.setattr(
        script,
        "stack_output",
        lambda stack, key: (
            url if (stack, key) == ("mine", "WebhookUrl") else pytest.fail(f"unexpected output {stack} {key}")
        ),
    )
    with FakeBotApi(TOKEN) as telegram:
        monkeypatch.setenv("TELEGRAM_API_BASE_URL", telegram.base_url)
        assert (
            script.main(
                [
                    "--stack",
                    "mine",
                    "--token-parameter",
                    "/set-webhook-test/token",
                    "--secret-parameter",
                    "/set-webhook-test/secret",
                ]
            )
            == 0
        )
        (call,) = telegram.calls("setWebhook")
    assert call["params"] == {
        "url": url,
        "secret_token": "hook-secret_1",
        "allowed_updates": list(HANDLED_UPDATES),
    }
