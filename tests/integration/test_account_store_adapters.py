"""The in-memory accounts store behaves like the DynamoDB one (moto, a table keyed as AccountsTable will be:
`pk`, `sk`, TTL `expires_at`), and the DynamoDB one keeps no secret readable: a scan of its table finds no
token, PKCE verifier, client secret or state, as is, in base64 or in hex."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from cryptography.fernet import Fernet
from moto import mock_aws
from support.secret_forms import forms

from stepwise.accounts.cipher import TokenCipher
from stepwise.accounts.dynamodb import DynamoAccountStore, account_key
from stepwise.accounts.models import Account, PendingSignIn, RegisteredClient
from stepwise.aws.dynamo_tables import PlainValuesTables
from stepwise_local.in_memory.accounts import InMemoryAccountStore

CREDENTIALS = {"region_name": "us-east-1", "aws_access_key_id": "testing", "aws_secret_access_key": "testing"}
TABLE = {
    "AttributeDefinitions": [
        {"AttributeName": "pk", "AttributeType": "S"},
        {"AttributeName": "sk", "AttributeType": "S"},
    ],
    "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
    "BillingMode": "PAY_PER_REQUEST",
}
CIPHER = TokenCipher(Fernet.generate_key())


@pytest.fixture(scope="module")
def tables() -> Iterator[Any]:
    with mock_aws():
        client = boto3.client("dynamodb", **CREDENTIALS)
        client.create_table(TableName="AccountStoreTests", **TABLE)
        yield PlainValuesTables(client)


@pytest.fixture(params=["memory", "dynamodb"])
def store(request: pytest.FixtureRequest, tables: Any) -> Any:
    if request.param == "memory":
        return InMemoryAccountStore()
    return DynamoAccountStore(tables.table("AccountStoreTests"), CIPHER)


_users = iter(range(70_000, 80_000))


def account(user: int, server: str = "calendar", **changes: Any) -> Account:
    fields = {
        "user_id": user,
        "server": server,
        "access_token": f"at-{user}-{server}-secret-access",
        "refresh_token": f"rt-{user}-{server}-secret-refresh",
        "expires_at": 1_800_003_600,
        "scope": "calendar.read",
        "connected_at": "2026-11-30T09:00:00Z",
    }
    return Account(**(fields | changes))


def test_accounts_are_kept_per_person_and_server(store: Any) -> None:
    user, other = next(_users), next(_users)
    kept = store.put(account(user))
    assert kept.version == 1 and kept._replace(version=1) == store.get(user, "calendar")
    store.put(account(user, "mail", refresh_token=None, expires_at=None, scope=None))
    store.put(account(other))
    assert store.get(user, "notes") is None and store.get(next(_users), "calendar") is None
    assert [(a.server, a.refresh_token, a.expires_at, a.scope) for a in store.list(user)] == [
        ("calendar", f"rt-{user}-calendar-secret-refresh", 1_800_003_600, "calendar.read"),
        ("mail", None, None, None),
    ]
    assert store.get(other, "calendar").access_token == f"at-{other}-calendar-secret-access"
    assert store.list(next(_users)) == []


def test_a_new_connection_replaces_the_old_one_at_a_higher_version(store: Any) -> None:
    user = next(_users)
    first = store.put(account(user))
    second = store.put(account(user, access_token="at-new", refresh_token=None))
    assert second.version > first.version
    got = store.get(user, "calendar")
    assert (got.access_token, got.refresh_token, got.version) == ("at-new", None, second.version)
    assert not store.replace(account(user, access_token="rotated from the old one"), first.version)
    assert store.get(user, "calendar").access_token == "at-new"


def test_a_rotation_is_kept_only_over_the_version_it_was_made_from(store: Any) -> None:
    user = next(_users)
    kept = store.put(account(user))
    assert store.replace(kept._replace(access_token="at-2", refresh_token="rt-2"), kept.version)
    assert not store.replace(kept._replace(access_token="at-late", refresh_token="rt-late"), kept.version)
    got = store.get(user, "calendar")
    assert (got.access_token, got.refresh_token, got.version) == ("at-2", "rt-2", kept.version + 1)
    assert store.replace(got._replace(refresh_token=None, expires_at=None), got.version)
    again = store.get(user, "calendar")
    assert (again.refresh_token, again.expires_at, again.version) == (None, None, kept.version + 2)
    assert not store.replace(account(next(_users)), 1), "no account to rotate"


def test_delete_forgets_once_and_only_the_version_asked_for(store: Any) -> None:
    user = next(_users)
    kept = store.put(account(user))
    assert not store.delete(user, "calendar", version=kept.version + 1)
    assert store.get(user, "calendar") is not None
    assert store.delete(user, "calendar", version=kept.version)
    assert store.get(user, "calendar") is None
    assert not store.delete(user, "calendar")
    store.put(account(user))
    assert store.delete(user, "calendar") and store.list(user) == []


def sign_in(state: str, user: int, expires_at: int = 1_800_000_600) -> PendingSignIn:
    return PendingSignIn(
        state=state,
        user_id=user,
        server="calendar",
        code_verifier=f"verifier-{state}-" + "v" * 50,
        redirect_uri="https://stepwise.example/oauth/callback",
        resource="https://calendar.example/mcp",
        made_at=1_800_000_000,
        expires_at=expires_at,
    )


def test_a_sign_in_is_taken_at_most_once(store: Any) -> None:
    user = next(_users)
    state = f"state-{user}-" + "s" * 40
    store.add_sign_in(sign_in(state, user))
    assert store.take_sign_in(f"state-{next(_users)}") is None
    assert store.take_sign_in(state) == sign_in(state, user)
    assert store.take_sign_in(state) is None
    late = f"late-{user}-" + "s" * 40
    store.add_sign_in(sign_in(late, user, expires_at=1_000))
    assert store.take_sign_in(late).expires_at == 1_000, "the caller refuses an expired one in its own words"
    assert store.take_sign_in(late) is None


def test_the_registered_client_is_kept_per_server(store: Any) -> None:
    assert store.get_client("nowhere") is None
    client = RegisteredClient(
        server="calendar",
        issuer="https://auth.calendar.example",
        client_id="client-1",
        client_secret="client-secret-1-" + "c" * 30,
        auth_method="client_secret_post",
        redirect_uri="https://stepwise.example/oauth/callback",
        scope="calendar.read",
        registered_at="2026-11-30T09:00:00Z",
    )
    store.put_client(client)
    assert store.get_client("calendar") == client
    public = client._replace(
        server="public", client_id="client-2", client_secret=None, auth_method="none", scope=None
    )
    store.put_client(public)
    store.put_client(client._replace(client_id="client-3"))
    assert store.get_client("calendar").client_id == "client-3"
    assert store.get_client("public") == public


def test_the_table_holds_no_secret_in_any_form(tables: Any) -> None:
    store = DynamoAccountStore(tables.table("AccountStoreTests"), CIPHER)
    user = next(_users)
    kept = store.put(account(user))
    secrets = [kept.access_token, kept.refresh_token]
    store.replace(
        kept._replace(access_token="rotated-access-" + "a" * 20, refresh_token="rotated-refresh-x"), 1
    )
    secrets += ["rotated-access-" + "a" * 20, "rotated-refresh-x"]
    state = "a-state-nobody-may-read-" + "s" * 20
    store.add_sign_in(sign_in(state, user))
    secrets += [state, sign_in(state, user).code_verifier]
    store.put_client(
        RegisteredClient(
            "vault", "https://a.example", "id", "client-secret-zz", "client_secret_basic", "u", None, "t"
        )
    )
    secrets.append("client-secret-zz")
    dump = json.dumps(tables.client.scan(TableName="AccountStoreTests")["Items"], default=str)
    for secret in secrets:
        for form in forms(secret):
            assert form not in dump
    assert store.get(user, "calendar").refresh_token == "rotated-refresh-x"


def test_a_sealed_token_moved_to_another_persons_item_does_not_open_there(tables: Any) -> None:
    table = tables.table("AccountStoreTests")
    store = DynamoAccountStore(table, CIPHER)
    victim, thief = next(_users), next(_users)
    store.put(account(victim))
    store.put(account(thief))
    sealed = table.get_item(Key=account_key(victim, "calendar"))["Item"]["access_token"]
    table.update_item(
        Key=account_key(thief, "calendar"),
        UpdateExpression="SET access_token = :t",
        ExpressionAttributeValues={":t": sealed},
    )
    assert store.get(thief, "calendar") is None
    assert store.get(victim, "calendar").access_token == account(victim).access_token
    other_key = DynamoAccountStore(table, TokenCipher(Fernet.generate_key()))
    assert other_key.get(victim, "calendar") is None and other_key.list(victim) == []
