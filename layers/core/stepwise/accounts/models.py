"""The values of accounts: a person's tokens for one server, a sign-in under way, and the client Stepwise is
registered as at a server.

Tokens, PKCE verifiers and client secrets are plain only in memory (the store encrypts them); these values
leave them out of their `repr`, so a value that ends up in a log line or a traceback shows none of them.
"""

from __future__ import annotations

from typing import NamedTuple

# An access token this close to its expiry is refreshed before use, not sent to fail.
EXPIRY_LEEWAY_SECONDS = 30


class Account(NamedTuple):
    """One person's tokens for one server. `version` grows with each write: a rotation is kept only over the
    version it was made from (`AccountStore.replace`)."""

    user_id: int
    server: str
    access_token: str
    refresh_token: str | None
    expires_at: int | None  # epoch seconds; None: the server gave no lifetime
    scope: str | None
    connected_at: str  # ISO 8601
    version: int = 1

    def expired(self, now: float) -> bool:
        """Whether the access token is past (or about to be past) its lifetime."""
        return self.expires_at is not None and now >= self.expires_at - EXPIRY_LEEWAY_SECONDS

    def __repr__(self) -> str:
        return (
            f"Account(user_id={self.user_id}, server={self.server!r}, expires_at={self.expires_at}, "
            f"scope={self.scope!r}, connected_at={self.connected_at!r}, version={self.version})"
        )


class PendingSignIn(NamedTuple):
    """A sign-in started and not yet finished: what its callback needs, found by its `state`."""

    state: str
    user_id: int
    server: str
    code_verifier: str  # PKCE: the secret whose hash the authorization request carried
    redirect_uri: str
    resource: str  # RFC 8707: the MCP server's URL
    made_at: int  # epoch seconds
    expires_at: int  # epoch seconds: a callback after this is refused

    def __repr__(self) -> str:
        return (
            f"PendingSignIn(user_id={self.user_id}, server={self.server!r}, made_at={self.made_at}, "
            f"expires_at={self.expires_at})"
        )


class RegisteredClient(NamedTuple):
    """The client Stepwise is at a server's authorization server: registered there (RFC 7591) and kept, or
    configured by hand (client_id_parameter). `redirect_uri` and `scope` are those it was registered with: a
    deployment whose callback or scopes changed registers again."""

    server: str
    issuer: str
    client_id: str
    client_secret: str | None
    auth_method: str  # token_endpoint_auth_method: client_secret_basic, client_secret_post or none
    redirect_uri: str
    scope: str | None
    registered_at: str  # ISO 8601

    def __repr__(self) -> str:
        return (
            f"RegisteredClient(server={self.server!r}, issuer={self.issuer!r}, client_id={self.client_id!r}, "
            f"auth_method={self.auth_method!r}, registered_at={self.registered_at!r})"
        )
