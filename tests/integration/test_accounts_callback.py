"""/accounts' Connect button and the sign-in callback's handler against the example notes server on 127.0.0.1
(its own sign-in page, dynamic registration, PKCE and tokens): the person taps Connect, signs in in the
browser (`stepwise_local.example_notes.browser`), and the browser's redirect reaches the OAuthCallbackFunction
handler as API Gateway's event; then the account works at the server, a replayed callback is refused, a
Cancel keeps nothing, and /accounts disconnect revokes the tokens there."""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any, cast
from urllib.parse import urlsplit

import pytest
import requests
from support.mcp_client import INITIALIZE
from support.turn_fakes import turn_meta

from stepwise.accounts.access import AccountsAccess
from stepwise.accounts.callback import CallbackServices
from stepwise.accounts.flow import AccountFlow
from stepwise.aws.http_transport import HttpTransport
from stepwise.commands.accounts import accounts
from stepwise.commands.handlers import CommandRequest, WithLinks
from stepwise.remote_tools.config import ServerEntry
from stepwise_local.example_notes.browser import decline, sign_in
from stepwise_local.example_notes.server import ExampleNotesServer
from stepwise_local.in_memory.accounts import InMemoryAccountStore
from stepwise_local.in_memory.reminders import InMemoryReminderStore
from stepwise_local.in_memory.telegram import InMemoryTelegram

ROOT = Path(__file__).resolve().parents[2]
CALLBACK = "https://api.example/oauth/callback"  # never opened: the browser helper stops before it
CONTEXT: Any = SimpleNamespace(
    function_name="OAuthCallbackFunction",
    function_version="$LATEST",
    invoked_function_arn="arn:aws:lambda:us-east-1:1:function:OAuthCallbackFunction",
    memory_limit_in_mb=512,
    aws_request_id="test",
)


def load_handler() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "oauth_callback_app", ROOT / "functions/oauth_callback/app.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class Deployment:
    def __init__(self, server: ExampleNotesServer, monkeypatch: pytest.MonkeyPatch) -> None:
        self.server = server
        self.entry = ServerEntry(name="notes", url=server.mcp_url, auth="oauth")
        self.store = InMemoryAccountStore()
        entries = (self.entry,)
        self.flow = AccountFlow(
            self.store, HttpTransport(), lambda: entries, lambda name: "", marks=InMemoryReminderStore()
        )
        self.access = AccountsAccess(
            store=lambda: self.store, flow=lambda: self.flow, servers=lambda: entries, callback_url=CALLBACK
        )
        self.telegram = InMemoryTelegram()
        self.handler = load_handler()
        services = CallbackServices(flow=lambda: self.flow, telegram=lambda: self.telegram)
        monkeypatch.setattr(self.handler, "get_runtime", lambda: SimpleNamespace(callback_services=services))

    def command(self, args: str = "", user: int = 7) -> str | WithLinks:
        services = cast(Any, SimpleNamespace(stores=SimpleNamespace(accounts=self.access)))
        return accounts(CommandRequest(args, turn_meta(chat_id=user, user_id=user), services, ""))

    def connect_link(self, user: int = 7) -> str:
        listed = self.command(user=user)
        assert isinstance(listed, WithLinks), listed
        ((label, url),) = listed.links
        assert label == "Connect notes"
        return url

    def callback(self, redirect: str) -> dict[str, Any]:
        """The browser reaching the callback: API Gateway's HTTP API event, through the handler."""
        parts = urlsplit(redirect)
        assert f"{parts.scheme}://{parts.netloc}{parts.path}" == CALLBACK
        event = {
            "version": "2.0",
            "routeKey": "GET /oauth/callback",
            "rawPath": "/oauth/callback",
            "rawQueryString": parts.query,
            "headers": {"host": "api.example"},
            "requestContext": {"http": {"method": "GET", "path": "/oauth/callback"}},
            "isBase64Encoded": False,
        }
        return cast(dict[str, Any], self.handler.handler(event, CONTEXT))


@pytest.fixture
def deployment(monkeypatch: pytest.MonkeyPatch) -> Iterator[Deployment]:
    with ExampleNotesServer() as server:
        yield Deployment(server, monkeypatch)


def test_connect_sign_in_and_the_callback_keep_a_working_account_once(deployment: Deployment) -> None:
    redirect = sign_in(deployment.connect_link(), "ada")
    answered = deployment.callback(redirect)
    assert answered["statusCode"] == 200
    assert "Connected notes. You can close this page." in answered["body"]
    assert answered["headers"]["Content-Type"].startswith("text/html")
    assert deployment.telegram.texts(7) == ["Connected notes."]
    account = deployment.store.get(7, "notes")
    assert account is not None

    # the token works at the server (it accepts only its own)
    reached = requests.post(
        deployment.server.mcp_url,
        json=INITIALIZE,
        headers={
            "Authorization": f"Bearer {account.access_token}",
            "Accept": "application/json, text/event-stream",
        },
        timeout=10,
    )
    assert reached.status_code == 200

    replayed = deployment.callback(redirect)
    assert replayed["statusCode"] == 400
    assert "unknown or was used already" in replayed["body"]
    assert deployment.telegram.texts(7) == ["Connected notes."]

    listed = deployment.command()
    assert isinstance(listed, str) and "notes: connected (since " in listed

    assert deployment.command("disconnect Notes") == "Disconnected notes: its tools are gone for you."
    assert deployment.store.get(7, "notes") is None
    refused = requests.post(
        deployment.server.mcp_url,
        json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        headers={"Authorization": f"Bearer {account.access_token}", "Accept": "application/json"},
        timeout=10,
    )
    assert refused.status_code == 401, "the access token was revoked at the server"


def test_a_cancelled_sign_in_keeps_nothing_and_tells_the_person(deployment: Deployment) -> None:
    redirect = decline(deployment.connect_link(user=8))
    answered = deployment.callback(redirect)
    assert answered["statusCode"] == 400
    assert "Not connected. notes did not sign you in (access_denied)." in answered["body"]
    assert deployment.telegram.texts(8) == [
        "Not connected: notes did not sign you in (access_denied). /accounts shows your accounts."
    ]
    assert deployment.store.accounts == {} and deployment.store.sign_ins == {}
