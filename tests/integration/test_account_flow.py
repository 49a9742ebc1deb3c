"""People's accounts against a real authorization server: the MCP SDK's routes
(`tests/support/oauth_server.py`) on 127.0.0.1, the DynamoDB store on moto with its key made in SSM, and a
browser that follows the sign-in's redirect as a person's would (the callback is read off its Location).
Discovery, registration kept once, PKCE checked by the SDK's token handler, states used once, refresh with
rotation, a refused refresh token, revocation, registering again after the server forgot the client, and no
token in the table in any form."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import boto3
import pytest
import requests
from moto import mock_aws
from support.oauth_server import AuthorizationServer
from support.secret_forms import forms

from stepwise.accounts.cipher import TokenCipher, ssm_key
from stepwise.accounts.dynamodb import DynamoAccountStore
from stepwise.accounts.flow import AccountFlow, Disconnected, SignInFailed
from stepwise.accounts.models import Account
from stepwise.aws.dynamo_tables import PlainValuesTables
from stepwise.aws.http_transport import HttpTransport
from stepwise.remote_tools.config import ServerEntry
from stepwise_local.in_memory.reminders import InMemoryReminderStore

CREDENTIALS = {"region_name": "us-east-1", "aws_access_key_id": "testing", "aws_secret_access_key": "testing"}
REDIRECT = "https://stepwise.example/oauth/callback"
KEY = "/stepwise/accounts/token-key"


class Clock:
    def __init__(self) -> None:
        self.now = time.time()

    def __call__(self) -> float:
        return self.now


class Setup:
    def __init__(self, server: AuthorizationServer, aws: Any) -> None:
        self.server = server
        self.entry = ServerEntry(name="cal", url=server.mcp, auth="oauth")
        self.aws = aws
        self.clock = Clock()
        cipher = TokenCipher(ssm_key(aws.ssm, KEY))
        self.store = DynamoAccountStore(aws.tables.table(aws.table_name), cipher)
        self.http = HttpTransport()
        self.profiles = InMemoryReminderStore()
        self.flow = self.new_flow()

    def new_flow(self) -> AccountFlow:
        """Another container's flow: the same store, nothing discovered yet."""
        return AccountFlow(
            self.store, self.http, lambda: (self.entry,), lambda name: "", marks=self.profiles, now=self.clock
        )

    def browse(self, url: str) -> dict[str, str]:
        """Open the authorization URL as a browser does; the callback's query it is sent to."""
        answer = requests.get(url, allow_redirects=False, timeout=10)
        assert answer.status_code == 302, answer.text
        location = answer.headers["Location"]
        assert location.startswith(REDIRECT + "?")
        return dict(parse_qsl(urlsplit(location).query))

    def connect(self, user: int) -> Account:
        callback = self.browse(self.flow.start_sign_in(user, self.entry, REDIRECT).url)
        account = self.flow.finish_sign_in(callback.get("state"), callback.get("code"), callback.get("error"))
        assert isinstance(account, Account), account
        return account

    def table_dump(self) -> str:
        items = self.aws.client.scan(TableName=self.aws.table_name)["Items"]
        return json.dumps(items, default=str)


_tables = iter(range(1000))


@pytest.fixture(scope="module")
def moto() -> Iterator[None]:
    with mock_aws():
        yield


class Aws:
    """The test's own table (over the runtime's plain-values client) and SSM (the key is made by the first
    test and read back by the others)."""

    def __init__(self) -> None:
        self.client = boto3.client("dynamodb", **CREDENTIALS)
        self.table_name = f"AccountFlowTests{next(_tables)}"
        self.client.create_table(
            TableName=self.table_name,
            AttributeDefinitions=[
                {"AttributeName": "pk", "AttributeType": "S"},
                {"AttributeName": "sk", "AttributeType": "S"},
            ],
            KeySchema=[
                {"AttributeName": "pk", "KeyType": "HASH"},
                {"AttributeName": "sk", "KeyType": "RANGE"},
            ],
            BillingMode="PAY_PER_REQUEST",
        )
        self.tables = PlainValuesTables(self.client)
        self.ssm = boto3.client("ssm", **CREDENTIALS)


@pytest.fixture
def setup(moto: None) -> Iterator[Setup]:
    with AuthorizationServer() as server:
        yield Setup(server, Aws())


def test_connect_refresh_with_rotation_and_disconnect(setup: Setup) -> None:
    provider = setup.server.provider
    account = setup.connect(7)
    assert account.access_token in provider.access and account.refresh_token in provider.refresh
    assert provider.resources == [setup.server.mcp, setup.server.mcp], "resource in authorize and token"
    assert account.scope == "cal.read cal.write"  # the resource metadata's scopes_supported
    setup.connect(8)
    setup.new_flow().start_sign_in(9, setup.entry, REDIRECT)
    assert provider.registrations == 1, "registered once per server, kept for every container"
    setup.clock.now += 3600
    fresh = setup.flow.current(7, "cal")
    assert isinstance(fresh, Account) and fresh.version == account.version + 1
    assert fresh.refresh_token != account.refresh_token and account.refresh_token not in provider.refresh
    assert setup.store.get(7, "cal") == fresh and provider.resources[-1] == setup.server.mcp
    assert setup.flow.disconnect(7, "cal")
    assert fresh.access_token not in provider.access and fresh.refresh_token not in provider.refresh
    assert setup.store.get(7, "cal") is None
    assert setup.store.get(8, "cal") is not None, "another person's account is theirs"


def test_a_refused_refresh_token_uses_the_newer_one_another_turn_kept_and_only_the_newest_disconnects(
    setup: Setup,
) -> None:
    account = setup.connect(7)
    first_turn = setup.flow.refresh(account)
    assert isinstance(first_turn, Account)
    second_turn = setup.new_flow().refresh(account)  # its refresh token was rotated away: invalid_grant
    assert second_turn == first_turn
    setup.server.provider.refresh.clear()  # the server forgets every refresh token
    gone = setup.flow.refresh(first_turn)
    assert gone == Disconnected(7, "cal", "the server refused its refresh token")
    assert setup.store.get(7, "cal") is None


def test_a_wrong_verifier_is_refused_by_the_token_endpoint_and_nothing_is_kept(setup: Setup) -> None:
    url = setup.flow.start_sign_in(7, setup.entry, REDIRECT).url
    state = dict(parse_qsl(urlsplit(url).query))["state"]
    pending = setup.store.take_sign_in(state)
    assert pending is not None
    setup.store.add_sign_in(pending._replace(code_verifier="x" * 64))
    callback = setup.browse(url)
    failed = setup.flow.finish_sign_in(callback["state"], callback["code"], None)
    assert (
        isinstance(failed, SignInFailed)
        and failed.kind == "exchange_failed"
        and "invalid_grant" in failed.reason
    )
    assert setup.store.get(7, "cal") is None and setup.server.provider.access == {}


def test_a_state_is_used_once_dies_when_late_and_an_unknown_one_is_refused(setup: Setup) -> None:
    callback = setup.browse(setup.flow.start_sign_in(7, setup.entry, REDIRECT).url)
    assert isinstance(setup.flow.finish_sign_in(callback["state"], callback["code"], None), Account)
    replay = setup.flow.finish_sign_in(callback["state"], callback["code"], None)
    assert isinstance(replay, SignInFailed) and replay.kind == "unknown"
    forged = setup.flow.finish_sign_in("a-state-of-another-deployment", callback["code"], None)
    assert isinstance(forged, SignInFailed) and forged.kind == "unknown"
    late = setup.browse(setup.flow.start_sign_in(8, setup.entry, REDIRECT).url)
    setup.clock.now += 600
    expired = setup.flow.finish_sign_in(late["state"], late["code"], None)
    assert isinstance(expired, SignInFailed) and (expired.kind, expired.user_id) == ("expired", 8)
    assert setup.store.get(8, "cal") is None
    assert late["code"] in setup.server.provider.codes, "a late state's code is never exchanged"


def test_a_server_that_forgot_the_client_gets_a_new_registration(setup: Setup) -> None:
    account = setup.connect(7)
    provider = setup.server.provider
    provider.clients.clear()  # the server forgot Stepwise's client (and so its tokens are no good)
    gone = setup.flow.refresh(account)
    assert isinstance(gone, Disconnected)
    assert provider.registrations == 2 and len(provider.clients) == 1
    setup.connect(7)  # the new client signs in, registering no third time
    assert provider.registrations == 2


def test_the_table_holds_no_token_verifier_state_or_client_secret_in_any_form(setup: Setup) -> None:
    account = setup.connect(7)
    fresh = setup.flow.refresh(account)
    assert isinstance(fresh, Account)
    url = setup.flow.start_sign_in(8, setup.entry, REDIRECT).url
    state = dict(parse_qsl(urlsplit(url).query))["state"]
    (client,) = setup.server.provider.clients.values()
    secrets = [account.access_token, account.refresh_token, fresh.access_token, fresh.refresh_token, state]
    secrets.append(client.client_secret)
    dump = setup.table_dump()
    for secret in secrets:
        assert secret is not None
        for form in forms(secret):
            assert form not in dump
    key = setup.aws.ssm.get_parameter(Name=KEY, WithDecryption=False)["Parameter"]
    assert key["Type"] == "SecureString"
