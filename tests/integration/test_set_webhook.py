"""`make webhook` calls setWebhook with the stack's URL, the secret token and the handled update types, and
setMyCommands with the command table's menu; what is missing is one line, not a traceback."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import boto3
import pytest
from botocore.stub import Stubber
from moto import mock_aws
from support.tools import ROOT

from stepwise.commands.table import menu
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
    aws: None, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    ssm = boto3.client("ssm")
    ssm.put_parameter(Name="/set-webhook-test/token", Value=TOKEN, Type="SecureString")
    ssm.put_parameter(Name="/set-webhook-test/secret", Value="hook-secret_1", Type="SecureString")
    script = load_script()
    url = "https://abc123.execute-api.eu-west-1.amazonaws.com/webhook"
    app_url = "https://abc123.execute-api.eu-west-1.amazonaws.com/app"
    outputs = {("mine", "WebhookUrl"): url, ("mine", "AppUrl"): app_url}
    monkeypatch.setattr(
        script,
        "stack_output",
        lambda stack, key: outputs.get((stack, key)) or pytest.fail(f"unexpected output {stack} {key}"),
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
        (commands,) = telegram.calls("setMyCommands")
        assert telegram.commands == menu()
        # the menu button opens the Mini App (a web_app button: Telegram signs the page's initData)
        assert telegram.menu_button == {"type": "web_app", "text": "Stepwise", "web_app": {"url": app_url}}
    assert call["params"] == {
        "url": url,
        "secret_token": "hook-secret_1",
        "allowed_updates": list(HANDLED_UPDATES),
    }
    assert commands["params"] == {"commands": menu()}
    assert [c["command"] for c in menu()][:2] == ["help", "tasks"]
    said = capsys.readouterr().err.splitlines()
    assert said[-1].startswith("Groups: @stepwise_bot cannot read all group messages (privacy mode on)")


def test_make_webhook_says_whether_the_bot_reads_every_group_message() -> None:
    script = load_script()
    assert script.group_reading({"username": "x_bot", "can_read_all_group_messages": True}).startswith(
        "Groups: @x_bot can read all group messages"
    )
    assert "/setprivacy" in script.group_reading({"username": "x_bot", "can_read_all_group_messages": False})


def run_failing(script: ModuleType, capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    """Run the script expecting failure; returns its one line on stderr."""
    assert script.main(list(argv)) == 1
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "Traceback" not in err, err
    return err


def run_script_without_aws(tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """Run the script in a fresh process (no moto in it), with no AWS configuration but `env`."""
    clean = {
        "PATH": os.environ.get("PATH", ""),
        "PYTHONPATH": os.pathsep.join([str(ROOT / "layers" / "core"), str(ROOT)]),
        "AWS_CONFIG_FILE": str(tmp_path / "no-config"),
        "AWS_SHARED_CREDENTIALS_FILE": str(tmp_path / "no-credentials"),
        "AWS_EC2_METADATA_DISABLED": "true",
        **env,
    }
    return subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "set_webhook.py")],
        env=clean,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_set_webhook_without_a_region_says_so_in_one_line(tmp_path: Path) -> None:
    done = run_script_without_aws(tmp_path)
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [
        "make webhook: no AWS region: set AWS_REGION (or AWS_DEFAULT_REGION, or a region in your AWS profile)"
    ]


def test_set_webhook_without_credentials_says_so_in_one_line(tmp_path: Path) -> None:
    done = run_script_without_aws(tmp_path, AWS_DEFAULT_REGION="eu-west-1")
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [
        "make webhook: no AWS credentials: configure them (aws configure, AWS_PROFILE or AWS_ACCESS_KEY_ID)"
    ]


def test_set_webhook_without_the_stack_says_so_in_one_line(
    aws: None, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # moto's CloudFormation needs extras this project does not install: CloudFormation's answer is stubbed.
    cloudformation = boto3.client("cloudformation")
    stubber = Stubber(cloudformation)
    stubber.add_client_error(
        "describe_stacks",
        service_error_code="ValidationError",
        service_message="Stack with id never-deployed does not exist",
        expected_params={"StackName": "never-deployed"},
    )
    stubber.activate()
    script = load_script()
    monkeypatch.setattr(script.boto3, "client", lambda service: cloudformation)
    line = run_failing(script, capsys, "--stack", "never-deployed")
    assert line == "make webhook: there is no stack 'never-deployed' in this region: run make deploy first"


def test_set_webhook_with_a_missing_secret_parameter_says_so_in_one_line(
    aws: None, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    script = load_script()
    monkeypatch.setattr(script, "stack_output", lambda stack, key: "https://example.com/webhook")
    line = run_failing(script, capsys, "--token-parameter", "/nowhere/token")
    assert "SSM parameter /nowhere/token does not exist" in line


def test_set_webhook_with_a_token_telegram_refuses_says_so_in_one_line(
    aws: None, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    script = load_script()
    monkeypatch.setattr(script, "stack_output", lambda stack, key: "https://example.com/webhook")
    monkeypatch.setenv("TELEGRAM_BOT_TOKEN", "1:wrong")
    monkeypatch.setenv("TELEGRAM_WEBHOOK_SECRET", "s")
    with FakeBotApi(TOKEN) as telegram:
        monkeypatch.setenv("TELEGRAM_API_BASE_URL", telegram.base_url)
        line = run_failing(script, capsys)
    assert "Unauthorized" in line and "1:wrong" not in line
