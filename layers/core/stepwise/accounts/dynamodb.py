"""Accounts in DynamoDB (AccountsTable: partition key `pk`, sort key `sk`, TTL `expires_at`).

- an account: `user#<id>` / `server#<name>`, its tokens sealed (`stepwise.accounts.cipher`), the access
  token's expiry in `token_expires_at` (not the TTL attribute: an account outlives its access token), and
  `version`, which every write raises (a rotation is a write conditioned on the version it was made from);
- a sign-in under way: `signin#<SHA-256 of its state>` / `signin`, its PKCE verifier sealed, expiring by TTL
  at `expires_at` (the table holds no live state, so a copy of it cannot finish anyone's sign-in);
- the client registered at a server: `client#<name>` / `client`, its secret sealed.
"""

from __future__ import annotations

import hashlib
import logging
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from botocore.exceptions import ClientError

from stepwise.accounts.cipher import CipherError
from stepwise.accounts.models import Account, PendingSignIn, RegisteredClient
from stepwise.aws.dynamodb_pages import all_items

if TYPE_CHECKING:
    from stepwise.accounts.cipher import TokenCipher

logger = logging.getLogger(__name__)

SERVER_PREFIX = "server#"


def account_key(user_id: int, server: str) -> dict[str, str]:
    return {"pk": f"user#{user_id}", "sk": f"{SERVER_PREFIX}{server}"}


def sign_in_key(state: str) -> dict[str, str]:
    return {"pk": f"signin#{hashlib.sha256(state.encode()).hexdigest()}", "sk": "signin"}


def client_key(server: str) -> dict[str, str]:
    return {"pk": f"client#{server}", "sk": "client"}


def _conditional_failure(error: ClientError) -> bool:
    code: str | None = error.response.get("Error", {}).get("Code")
    return code == "ConditionalCheckFailedException"


def _plain(item: dict[str, Any]) -> dict[str, Any]:
    """The item without its key, DynamoDB's Decimals made ints again."""
    return {k: int(v) if isinstance(v, Decimal) else v for k, v in item.items() if k not in ("pk", "sk")}


class DynamoAccountStore:
    """AccountStore on a DynamoDB table; secrets sealed with `cipher` before they are written."""

    def __init__(self, table: Any, cipher: TokenCipher) -> None:
        self._table = table
        self._cipher = cipher

    # ------------------------------------------------------------------------------------------- accounts
    def get(self, user_id: int, server: str) -> Account | None:
        item = self._table.get_item(Key=account_key(user_id, server), ConsistentRead=True).get("Item")
        return self._account(item) if item is not None else None

    def list(self, user_id: int) -> list[Account]:
        items = all_items(
            self._table.query,
            KeyConditionExpression="pk = :pk AND begins_with(sk, :prefix)",
            ExpressionAttributeValues={":pk": f"user#{user_id}", ":prefix": SERVER_PREFIX},
            ConsistentRead=True,
        )
        accounts = (self._account(item) for item in items)
        return sorted((a for a in accounts if a is not None), key=lambda a: a.server)

    def put(self, account: Account) -> Account:
        fields = self._account_fields(account)
        present = {name: value for name, value in fields.items() if value is not None}
        absent = [name for name, value in fields.items() if value is None]
        expression = "SET " + ", ".join(f"#{n} = :{n}" for n in present) + " ADD #version :one"
        if absent:
            expression += " REMOVE " + ", ".join(f"#{n}" for n in absent)
        written = self._table.update_item(
            Key=account_key(account.user_id, account.server),
            UpdateExpression=expression,
            ExpressionAttributeNames={f"#{n}": n for n in [*fields, "version"]},
            ExpressionAttributeValues={f":{n}": v for n, v in present.items()} | {":one": 1},
            ReturnValues="UPDATED_NEW",
        )["Attributes"]
        return account._replace(version=int(written["version"]))

    def replace(self, account: Account, expected_version: int) -> bool:
        fields = {k: v for k, v in self._account_fields(account).items() if v is not None}
        item = {**account_key(account.user_id, account.server), **fields, "version": expected_version + 1}
        try:
            self._table.put_item(
                Item=item,
                ConditionExpression="#version = :expected",
                ExpressionAttributeNames={"#version": "version"},
                ExpressionAttributeValues={":expected": expected_version},
            )
        except ClientError as error:
            if _conditional_failure(error):
                return False
            raise
        return True

    def delete(self, user_id: int, server: str, version: int | None = None) -> bool:
        condition = "attribute_exists(pk)" + (" AND #version = :version" if version is not None else "")
        extra: dict[str, Any] = (
            {
                "ExpressionAttributeNames": {"#version": "version"},
                "ExpressionAttributeValues": {":version": version},
            }
            if version is not None
            else {}
        )
        try:
            self._table.delete_item(Key=account_key(user_id, server), ConditionExpression=condition, **extra)
        except ClientError as error:
            if _conditional_failure(error):
                return False
            raise
        return True

    def _account_fields(self, account: Account) -> dict[str, Any]:
        context = f"account#{account.user_id}#{account.server}"
        refresh = account.refresh_token
        return {
            "user_id": account.user_id,
            "server": account.server,
            "access_token": self._cipher.seal(account.access_token, context),
            "refresh_token": self._cipher.seal(refresh, context) if refresh is not None else None,
            "token_expires_at": account.expires_at,
            "scope": account.scope,
            "connected_at": account.connected_at,
        }

    def _account(self, item: dict[str, Any]) -> Account | None:
        data = _plain(item)
        context = f"account#{data['user_id']}#{data['server']}"
        try:
            access = self._cipher.open(data["access_token"], context)
            refresh = self._cipher.open(data["refresh_token"], context) if "refresh_token" in data else None
        except CipherError as error:
            logger.warning(f"account of user {data['user_id']} at {data['server']} is unreadable ({error})")
            return None
        return Account(
            user_id=data["user_id"],
            server=data["server"],
            access_token=access,
            refresh_token=refresh,
            expires_at=data.get("token_expires_at"),
            scope=data.get("scope"),
            connected_at=data["connected_at"],
            version=data["version"],
        )

    # ------------------------------------------------------------------------------------------- sign-ins
    def add_sign_in(self, sign_in: PendingSignIn) -> None:
        key = sign_in_key(sign_in.state)
        item = {
            **key,
            "user_id": sign_in.user_id,
            "server": sign_in.server,
            "code_verifier": self._cipher.seal(sign_in.code_verifier, key["pk"]),
            "redirect_uri": sign_in.redirect_uri,
            "resource": sign_in.resource,
            "made_at": sign_in.made_at,
            "expires_at": sign_in.expires_at,
        }
        self._table.put_item(Item=item)

    def take_sign_in(self, state: str) -> PendingSignIn | None:
        key = sign_in_key(state)
        try:
            old = self._table.delete_item(
                Key=key, ConditionExpression="attribute_exists(pk)", ReturnValues="ALL_OLD"
            ).get("Attributes")
        except ClientError as error:
            if _conditional_failure(error):
                return None
            raise
        if old is None:
            return None
        data = _plain(old)
        try:
            verifier = self._cipher.open(data["code_verifier"], key["pk"])
        except CipherError as error:
            logger.warning(f"a sign-in of user {data['user_id']} at {data['server']} is unreadable ({error})")
            return None
        return PendingSignIn(
            state=state,
            user_id=data["user_id"],
            server=data["server"],
            code_verifier=verifier,
            redirect_uri=data["redirect_uri"],
            resource=data["resource"],
            made_at=data["made_at"],
            expires_at=data["expires_at"],
        )

    # -------------------------------------------------------------------------------------------- clients
    def get_client(self, server: str) -> RegisteredClient | None:
        key = client_key(server)
        item = self._table.get_item(Key=key, ConsistentRead=True).get("Item")
        if item is None:
            return None
        data = _plain(item)
        try:
            secret = self._cipher.open(data["client_secret"], key["pk"]) if "client_secret" in data else None
        except CipherError as error:
            logger.warning(f"the client registered at {server} is unreadable ({error}); it registers again")
            return None
        return RegisteredClient(
            server=data["server"],
            issuer=data["issuer"],
            client_id=data["client_id"],
            client_secret=secret,
            auth_method=data["auth_method"],
            redirect_uri=data["redirect_uri"],
            scope=data.get("scope"),
            registered_at=data["registered_at"],
        )

    def put_client(self, client: RegisteredClient) -> None:
        key = client_key(client.server)
        item = {
            **key,
            "server": client.server,
            "issuer": client.issuer,
            "client_id": client.client_id,
            "client_secret": self._cipher.seal(client.client_secret, key["pk"])
            if client.client_secret
            else None,
            "auth_method": client.auth_method,
            "redirect_uri": client.redirect_uri,
            "scope": client.scope,
            "registered_at": client.registered_at,
        }
        self._table.put_item(Item={k: v for k, v in item.items() if v is not None})
