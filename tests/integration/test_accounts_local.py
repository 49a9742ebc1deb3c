"""People's accounts on the emulated stack, as `make chat` deploys them: the example notes server (its own
sign-in, an MCP server that accepts only its tokens) in the servers list as an OAuth entry, the Mini App's
Connect starting the sign-in, a browser signing in at the example server, and the callback on the local
HTTP server keeping the account and telling the person. Replayed, forged and late states are refused with
nothing kept, and no token is anywhere at rest: no table item, SSM parameter or log line holds one, as it is,
in base64 or in hex."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import timedelta
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import boto3
import pytest
import requests
from support.miniapp import act, init_data, state
from support.secret_forms import forms
from support.stack import Stack, clock_kept

from stepwise_local.anthropic_server import text
from stepwise_local.example_notes.browser import sign_in
from stepwise_local.example_notes.server import ExampleNotesServer
from stepwise_local.mcp_http import LocalMcpEndpoint

ACCOUNTS_TABLE = "AccountsTable"  # the template's table (the emulation names tables by logical id)
SERVERS = "/stepwise/mcp/accounts-servers"


class Local:
    """The stack with the example notes server listed and the local HTTP server (/app, /oauth/callback)."""

    def __init__(self, stack: Stack, notes: ExampleNotesServer, endpoint: LocalMcpEndpoint) -> None:
        self.stack, self.notes, self.endpoint = stack, notes, endpoint

    def data(self, user: int) -> str:
        return init_data(user, auth_date=int(self.stack.emulation.now().timestamp()))

    def connect(self, user: int) -> str:
        """Tap Connect notes in the Mini App; the sign-in URL it opens."""
        answer = act(self.endpoint.app_url, self.data(user), "account_connect", "notes", f"connect-{user}")
        assert answer.status_code == 200, answer.text
        url: str = answer.json()["url"]
        return url

    def accounts(self, user: int) -> list[dict[str, Any]]:
        shown = state(self.endpoint.app_url, self.data(user))
        assert shown.status_code == 200, shown.text
        accounts: list[dict[str, Any]] = shown.json()["accounts"]
        return accounts

    def items(self) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = self.stack.emulation.table(ACCOUNTS_TABLE).scan()["Items"]
        return items


@pytest.fixture
def local(stack: Stack) -> Iterator[Local]:
    emulation = stack.emulation
    with (
        ExampleNotesServer(clock=lambda: emulation.now().timestamp()) as notes,
        LocalMcpEndpoint(emulation) as endpoint,
    ):
        emulation.put_parameter(
            SERVERS, json.dumps([{"name": "notes", "url": notes.mcp_url, "auth": "oauth"}])
        )
        emulation.config.env["MCP_SERVERS_PARAMETER"] = SERVERS
        yield Local(stack, notes, endpoint)


def callback(url: str) -> requests.Response:
    return requests.get(url, allow_redirects=False, timeout=30)


def test_a_sign_in_through_the_mini_app_and_the_local_callback_keeps_the_account_and_tells_the_person(
    local: Local,
) -> None:
    user = local.stack.new_user()
    assert local.accounts(user) == [{"name": "notes", "connected": False, "since": None}]
    url = local.connect(user)
    assert urlsplit(url).netloc == urlsplit(local.notes.url).netloc
    back = sign_in(url, "Ada")
    assert back.startswith(local.endpoint.callback_url + "?")
    page = callback(back)
    assert page.status_code == 200 and "Connected notes. You can close this page." in page.text
    assert "Connected notes." in local.stack.replies(user)
    (shown,) = local.accounts(user)
    assert shown["connected"] is True and shown["since"]
    # The callback exchanged the code at the example server with the verifier and the resource.
    (exchange,) = [
        r for r in local.notes.seen.to("/token") if r.params.get("grant_type") == "authorization_code"
    ]
    assert exchange.params["resource"] == local.notes.mcp_url and exchange.params["code_verifier"]

    # Replayed: the same callback again is refused, and the kept account is as it was.
    kept = [i for i in local.items() if str(i["pk"]) == f"user#{user}"]
    again = callback(back)
    assert again.status_code == 400 and "unknown or was used already" in again.text
    assert [i for i in local.items() if str(i["pk"]) == f"user#{user}"] == kept
    assert local.stack.replies(user).count("Connected notes.") == 1


def test_a_forged_state_is_refused_and_keeps_nothing(local: Local) -> None:
    before = local.items()
    for query in ("state=forged&code=some-code", "code=some-code", "state=&error=access_denied"):
        page = callback(f"{local.endpoint.callback_url}?{query}")
        assert page.status_code == 400, query
    assert local.items() == before


def test_a_late_callback_is_refused_keeps_nothing_and_tells_its_person(local: Local) -> None:
    user = local.stack.new_user()
    back = sign_in(local.connect(user), "Bo")
    with clock_kept(local.stack):
        local.stack.emulation.advance_clock(timedelta(minutes=11))
        page = callback(back)
    assert page.status_code == 400 and "expired" in page.text
    assert not [i for i in local.items() if str(i["pk"]) == f"user#{user}"]
    assert any(
        line.startswith("Not connected: ") and "notes" in line and "expired" in line
        for line in local.stack.replies(user)
    )


def test_no_token_is_at_rest_in_any_table_parameter_or_log(
    local: Local, caplog: pytest.LogCaptureFixture, capsys: pytest.CaptureFixture[str]
) -> None:
    user = local.stack.new_user()
    assert callback(sign_in(local.connect(user), "Cy")).status_code == 200
    provider = local.notes.provider
    secrets = [*provider._access, *provider._refresh]  # what the example server issued
    assert len(secrets) >= 2
    client = boto3.client("dynamodb")
    dumped = []
    for table in client.list_tables()["TableNames"]:
        for page in client.get_paginator("scan").paginate(TableName=table):
            dumped.append(json.dumps(page["Items"]))
    ssm = boto3.client("ssm")
    for page in ssm.get_paginator("describe_parameters").paginate():
        for parameter in page["Parameters"]:
            value = ssm.get_parameter(Name=parameter["Name"], WithDecryption=True)["Parameter"]["Value"]
            dumped.append(parameter["Name"] + "=" + value)
    printed = capsys.readouterr()
    dumped.append(caplog.text + printed.out + printed.err)
    everything = "\n".join(dumped)
    assert f"user#{user}" in everything  # the scan did reach the account
    for secret in secrets:
        for form in forms(secret):
            assert form not in everything
    # The state of the sign-in is kept only as its hash.
    state_value = dict(parse_qsl(urlsplit(local.connect(user)).query))["state"]
    assert all(
        form not in "\n".join(json.dumps(i, default=str) for i in local.items())
        for form in forms(state_value)
    )


def test_a_plain_turn_of_a_person_without_accounts_reads_no_account_and_one_with_them_does(
    local: Local,
) -> None:
    """With an OAuth server listed, the person's profile (read with their time zone) says whether to read
    their accounts: someone who never connected one costs no accounts' request (docs/measurements.md)."""
    emulation = local.stack.emulation
    local.stack.anthropic.always(text("Hello!"))
    user = local.stack.new_user()
    emulation.dynamodb_actions.clear()
    assert local.stack.say(user, "hello")["status"] == "SUCCEEDED"
    assert {action for action in emulation.dynamodb_actions if action[1] == ACCOUNTS_TABLE} == set()

    page = callback(sign_in(local.connect(user), "Ada"))
    assert page.status_code == 200
    emulation.dynamodb_actions.clear()
    assert local.stack.say(user, "hello again")["status"] == "SUCCEEDED"
    assert ("CallModelFunction", ACCOUNTS_TABLE, "dynamodb:Query") in emulation.dynamodb_actions
