"""A small authorization server for the accounts' tests: the MCP SDK's own routes (`mcp.server.auth`: RFC 8414
metadata, authorize, token with its PKCE check, RFC 7591 registration, RFC 7009 revocation) over an in-memory
provider that approves every sign-in at once, the protected resource metadata (RFC 9728) of an MCP endpoint
that answers 401 with a pointer to it, all served by uvicorn on 127.0.0.1. Refresh tokens rotate on use."""

from __future__ import annotations

import secrets
import threading
import time
from typing import Any

import uvicorn
from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    RefreshToken,
    construct_redirect_uri,
)
from mcp.server.auth.routes import (
    build_resource_metadata_url,
    create_auth_routes,
    create_protected_resource_routes,
)
from mcp.server.auth.settings import ClientRegistrationOptions, RevocationOptions
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken
from pydantic import AnyHttpUrl
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from support.mcp_servers import free_port

SCOPES = ["cal.read", "cal.write"]


class AutoApprovingProvider:
    """OAuthAuthorizationServerProvider in dicts: every authorization is granted; `resources` records the
    `resource` of each authorization and token request."""

    def __init__(self) -> None:
        self.clients: dict[str, OAuthClientInformationFull] = {}
        self.codes: dict[str, AuthorizationCode] = {}
        self.access: dict[str, AccessToken] = {}
        self.refresh: dict[str, RefreshToken] = {}
        self.resources: list[str | None] = []
        self.registrations = 0

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        return self.clients.get(client_id)

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        self.registrations += 1
        self.clients[client_info.client_id] = client_info

    async def authorize(self, client: OAuthClientInformationFull, params: AuthorizationParams) -> str:
        self.resources.append(params.resource)
        code = secrets.token_urlsafe(24)
        self.codes[code] = AuthorizationCode(
            code=code,
            scopes=params.scopes or [],
            expires_at=time.time() + 300,
            client_id=client.client_id,
            code_challenge=params.code_challenge,
            redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
            resource=params.resource,
        )
        return construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state)

    async def load_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: str
    ) -> AuthorizationCode | None:
        return self.codes.get(authorization_code)

    async def exchange_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: AuthorizationCode
    ) -> OAuthToken:
        del self.codes[authorization_code.code]
        return self._issue(client.client_id, authorization_code.scopes, authorization_code.resource)

    async def load_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: str
    ) -> RefreshToken | None:
        return self.refresh.get(refresh_token)

    async def exchange_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: RefreshToken, scopes: list[str]
    ) -> OAuthToken:
        del self.refresh[refresh_token.token]  # rotation: a refresh token works once
        return self._issue(client.client_id, scopes, refresh_token.resource)

    async def load_access_token(self, token: str) -> AccessToken | None:
        return self.access.get(token)

    async def revoke_token(self, token: AccessToken | RefreshToken) -> None:
        self.access.pop(token.token, None)
        self.refresh.pop(token.token, None)

    def _issue(self, client_id: str, scopes: list[str], resource: str | None) -> OAuthToken:
        self.resources.append(resource)
        access, refresh = f"at_{secrets.token_urlsafe(24)}", f"rt_{secrets.token_urlsafe(24)}"
        self.access[access] = AccessToken(
            token=access,
            client_id=client_id,
            scopes=scopes,
            expires_at=int(time.time()) + 3600,
            resource=resource,
        )
        self.refresh[refresh] = RefreshToken(
            token=refresh, client_id=client_id, scopes=scopes, resource=resource
        )
        return OAuthToken(access_token=access, expires_in=3600, refresh_token=refresh, scope=" ".join(scopes))


class AuthorizationServer:
    """`with AuthorizationServer() as server:` the routes at `server.base`, the MCP endpoint at `server.mcp`
    (401 with its metadata's URL), the provider at `server.provider`."""

    def __init__(self) -> None:
        self.provider = AutoApprovingProvider()
        port = free_port()
        self.base = f"http://127.0.0.1:{port}"
        self.mcp = f"{self.base}/mcp"
        metadata_url = str(build_resource_metadata_url(AnyHttpUrl(self.mcp)))

        async def mcp_endpoint(request: Request) -> Response:
            header = f'Bearer error="invalid_token", resource_metadata="{metadata_url}"'
            return JSONResponse(
                {"error": "invalid_token"}, status_code=401, headers={"WWW-Authenticate": header}
            )

        routes: list[Any] = [
            *create_auth_routes(
                self.provider,  # type: ignore[arg-type]
                issuer_url=AnyHttpUrl(self.base),
                client_registration_options=ClientRegistrationOptions(enabled=True, valid_scopes=SCOPES),
                revocation_options=RevocationOptions(enabled=True),
            ),
            *create_protected_resource_routes(
                AnyHttpUrl(self.mcp), [AnyHttpUrl(self.base)], scopes_supported=SCOPES
            ),
            Route("/mcp", mcp_endpoint, methods=["GET", "POST"]),
        ]
        config = uvicorn.Config(Starlette(routes=routes), host="127.0.0.1", port=port, log_level="warning")
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, name="oauth-server", daemon=True)

    def __enter__(self) -> AuthorizationServer:
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started:
            if time.monotonic() > deadline:
                raise TimeoutError("the authorization server did not start")
            time.sleep(0.01)
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=10)
