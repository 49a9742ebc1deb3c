"""The example notes server's authorization server: the provider behind the MCP SDK's OAuth routes
(`mcp.server.auth`), in memory.

The SDK's handlers do the protocol (metadata, dynamic client registration, the authorization request's checks,
PKCE S256 at the token endpoint, client authentication, revocation); this provider keeps what they ask it to
keep. Its `authorize` parks the request and sends the browser to the server's own sign-in page, whose form
(`complete_sign_in`) issues the code for the name the person typed (or, declined, `access_denied`).

Tokens: an access token lives `access_token_seconds` on the provider's clock (tests and `make chat` may move
it); a refresh token rotates on use (the used one is refused after, the grant's earlier access tokens live on
until they expire); revoking either token of a sign-in revokes all of that sign-in's tokens. Authorization
requests must name this server's MCP URL as their `resource` (RFC 8707), or get `invalid_target`.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections.abc import Callable
from typing import NamedTuple

from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    AuthorizeError,
    OAuthAuthorizationServerProvider,
    RefreshToken,
    construct_redirect_uri,
)
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken

SIGN_IN_PATH = "/sign-in"
CODE_SECONDS = 300  # the SDK's token endpoint judges a code's age by the real time, not the provider's clock
LONGEST_NAME = 64


class SignInRequest(NamedTuple):
    """An authorization request waiting on the sign-in page."""

    client: OAuthClientInformationFull
    params: AuthorizationParams


class _Issued(NamedTuple):
    """An access token, when it dies on the provider's clock, and the sign-in it belongs to."""

    token: AccessToken
    expires_at: float
    grant: str


class _Refresh(NamedTuple):
    token: RefreshToken
    grant: str


def same_resource(given: str | None, resource: str) -> bool:
    """Whether `given` names `resource` (a trailing slash aside)."""
    return given is not None and given.rstrip("/") == resource.rstrip("/")


class SignInProvider(OAuthAuthorizationServerProvider[AuthorizationCode, RefreshToken, AccessToken]):
    """`OAuthAuthorizationServerProvider` for the example notes server at `base_url`, whose MCP endpoint
    (the one resource its tokens are for) is `resource`. Thread-safe: the server's event loop and a test's
    thread may both use it."""

    def __init__(
        self,
        base_url: str,
        resource: str,
        scopes: list[str],
        access_token_seconds: int = 3600,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.resource = resource
        self.scopes = list(scopes)
        self.access_token_seconds = access_token_seconds
        self.clock = clock
        self._lock = threading.Lock()
        self._clients: dict[str, OAuthClientInformationFull] = {}
        self._waiting: dict[str, SignInRequest] = {}
        self._codes: dict[str, AuthorizationCode] = {}
        self._access: dict[str, _Issued] = {}
        self._refresh: dict[str, _Refresh] = {}

    # --- what the SDK's handlers call ---

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        with self._lock:
            return self._clients.get(client_id)

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        with self._lock:
            self._clients[client_info.client_id] = client_info

    async def authorize(self, client: OAuthClientInformationFull, params: AuthorizationParams) -> str:
        if not same_resource(params.resource, self.resource):
            raise AuthorizeError("invalid_target", f"resource must be {self.resource}")
        request_id = secrets.token_urlsafe(24)
        with self._lock:
            self._waiting[request_id] = SignInRequest(client, params)
        return construct_redirect_uri(self.base_url + SIGN_IN_PATH, request=request_id)

    async def load_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: str
    ) -> AuthorizationCode | None:
        with self._lock:
            code = self._codes.get(authorization_code)
        return code if code is not None and code.client_id == client.client_id else None

    async def exchange_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: AuthorizationCode
    ) -> OAuthToken:
        with self._lock:
            self._codes.pop(authorization_code.code, None)  # a code is good once
            return self._issue(
                client.client_id,
                authorization_code.scopes,
                authorization_code.resource,
                str(authorization_code.subject),
                grant=secrets.token_hex(8),
            )

    async def load_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: str
    ) -> RefreshToken | None:
        with self._lock:
            kept = self._refresh.get(refresh_token)
        return kept.token if kept is not None and kept.token.client_id == client.client_id else None

    async def exchange_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: RefreshToken, scopes: list[str]
    ) -> OAuthToken:
        with self._lock:
            used = self._refresh.pop(refresh_token.token)  # rotation: the used token is refused after
            return self._issue(
                client.client_id, scopes, refresh_token.resource, str(refresh_token.subject), used.grant
            )

    async def load_access_token(self, token: str) -> AccessToken | None:
        with self._lock:
            issued = self._access.get(token)
        if issued is None or self.clock() >= issued.expires_at:
            return None
        return issued.token

    async def revoke_token(self, token: AccessToken | RefreshToken) -> None:
        with self._lock:
            issued = self._access.get(token.token)
            kept = self._refresh.get(token.token)
            grant = issued.grant if issued else kept.grant if kept else None
            self._access = {k: v for k, v in self._access.items() if v.grant != grant}
            self._refresh = {k: v for k, v in self._refresh.items() if v.grant != grant}

    # --- the sign-in page's side ---

    def waiting(self, request_id: str) -> SignInRequest | None:
        """The authorization request the sign-in page is showing, if it is still waiting."""
        with self._lock:
            return self._waiting.get(request_id)

    def complete_sign_in(self, request_id: str, name: str) -> str | None:
        """The person signed in as `name`: a code for them, and the client's redirect URI carrying it (None
        for a request that is not waiting: unknown, or already answered)."""
        with self._lock:
            request = self._waiting.pop(request_id, None)
            if request is None:
                return None
            params = request.params
            code = AuthorizationCode(
                code=secrets.token_urlsafe(32),
                scopes=params.scopes or self.scopes,
                expires_at=time.time() + CODE_SECONDS,
                client_id=request.client.client_id,
                code_challenge=params.code_challenge,
                redirect_uri=params.redirect_uri,
                redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
                resource=params.resource,
                subject=name,
            )
            self._codes[code.code] = code
        return construct_redirect_uri(str(params.redirect_uri), code=code.code, state=params.state)

    def decline_sign_in(self, request_id: str) -> str | None:
        """The person said no: the redirect URI with `access_denied` (None as for `complete_sign_in`)."""
        with self._lock:
            request = self._waiting.pop(request_id, None)
        if request is None:
            return None
        return construct_redirect_uri(
            str(request.params.redirect_uri),
            error="access_denied",
            error_description="The person declined to sign in.",
            state=request.params.state,
        )

    def live_access_tokens(self, name: str) -> int:
        """How many access tokens of `name` the server would accept now."""
        now = self.clock()
        with self._lock:
            return sum(1 for i in self._access.values() if i.token.subject == name and now < i.expires_at)

    def _issue(
        self, client_id: str, scopes: list[str], resource: str | None, name: str, grant: str
    ) -> OAuthToken:
        access = AccessToken(
            token=secrets.token_urlsafe(32),
            client_id=client_id,
            scopes=scopes,
            expires_at=None,  # judged on the provider's clock (load_access_token), not by the SDK
            resource=resource,
            subject=name,
        )
        refresh = RefreshToken(
            token=secrets.token_urlsafe(32),
            client_id=client_id,
            scopes=scopes,
            resource=resource,
            subject=name,
        )
        self._access[access.token] = _Issued(access, self.clock() + self.access_token_seconds, grant)
        self._refresh[refresh.token] = _Refresh(refresh, grant)
        return OAuthToken(
            access_token=access.token,
            expires_in=self.access_token_seconds,
            scope=" ".join(scopes),
            refresh_token=refresh.token,
        )
