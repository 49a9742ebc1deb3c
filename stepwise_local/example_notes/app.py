"""The example notes server's HTTP app: the MCP SDK's own pieces put together, plus a sign-in page.

- the OAuth authorization server: the SDK's routes (`/.well-known/oauth-authorization-server`, `/authorize`,
  `/token`, `/register` for dynamic client registration, `/revoke`) over `SignInProvider`;
- the protected resource metadata (RFC 9728) at `/.well-known/oauth-protected-resource/mcp` (the SDK's) and at
  `/.well-known/oauth-protected-resource` (the origin's), naming this server as the authorization server;
- `/mcp`: the notes tools over Streamable HTTP behind the SDK's bearer middleware, which accepts only this
  server's unexpired access tokens issued for `/mcp` and answers anything else 401 with a `WWW-Authenticate`
  header naming the resource metadata;
- `/sign-in`: the page `authorize` sends the browser to.

Every request is recorded (`SeenRequests`: its path and its query, form or JSON parameters; `/mcp` bodies
left out) so that tests can check what a client sent, and the token endpoint refuses a request without this
server's `resource` (RFC 8707 `invalid_target`), as the SDK's handler does not look at it.
"""

from __future__ import annotations

import html
import json
import threading
from typing import TYPE_CHECKING, Any, NamedTuple
from urllib.parse import parse_qsl

from mcp.server.auth.handlers.metadata import ProtectedResourceMetadataHandler
from mcp.server.auth.provider import ProviderTokenVerifier
from mcp.server.auth.routes import cors_middleware
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions, RevocationOptions
from mcp.shared.auth import ProtectedResourceMetadata
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from stepwise_local.example_notes.authorization import LONGEST_NAME, SIGN_IN_PATH, same_resource
from stepwise_local.example_notes.notes import notes_mcp_server

if TYPE_CHECKING:
    from starlette.requests import Request
    from starlette.types import ASGIApp, Message, Receive, Scope, Send

    from stepwise_local.example_notes.authorization import SignInProvider
    from stepwise_local.example_notes.notes import Notes

MCP_PATH = "/mcp"
RESOURCE_METADATA_PATH = "/.well-known/oauth-protected-resource"
TOKEN_PATH = "/token"


class SeenRequest(NamedTuple):
    """One request the server received: method, path, and its parameters (query, then form or JSON body)."""

    method: str
    path: str
    params: dict[str, Any]


class SeenRequests:
    """The requests the server received, in order (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._seen: list[SeenRequest] = []

    def add(self, request: SeenRequest) -> None:
        with self._lock:
            self._seen.append(request)

    def to(self, path: str) -> list[SeenRequest]:
        """The requests to `path`, oldest first."""
        with self._lock:
            return [r for r in self._seen if r.path == path]

    @property
    def all(self) -> list[SeenRequest]:
        with self._lock:
            return list(self._seen)


def notes_app(provider: SignInProvider, notes: Notes, seen: SeenRequests) -> ASGIApp:
    """The whole server as one ASGI app (with the lifespan that runs the MCP sessions)."""
    # URLs given as strings, so that the SDK's models keep the issuer's empty path empty (RFC 8414 compares
    # issuers as strings); a bare AnyHttpUrl would add a trailing slash.
    auth = AuthSettings(
        issuer_url=provider.base_url,
        resource_server_url=provider.resource,
        required_scopes=provider.scopes,
        client_registration_options=ClientRegistrationOptions(
            enabled=True, valid_scopes=provider.scopes, default_scopes=provider.scopes
        ),
        revocation_options=RevocationOptions(enabled=True),
        validate_token_resource=True,
    )
    origin_metadata = ProtectedResourceMetadata(
        resource=auth.resource_server_url,
        authorization_servers=[auth.issuer_url],
        scopes_supported=provider.scopes,
    )
    routes = [
        Route(SIGN_IN_PATH, _sign_in_page(provider), methods=["GET", "POST"]),
        Route(
            RESOURCE_METADATA_PATH,
            endpoint=cors_middleware(
                ProtectedResourceMetadataHandler(origin_metadata).handle, ["GET", "OPTIONS"]
            ),
            methods=["GET", "OPTIONS"],
        ),
    ]
    app = notes_mcp_server(notes).streamable_http_app(
        streamable_http_path=MCP_PATH,
        auth=auth,
        auth_server_provider=provider,
        token_verifier=ProviderTokenVerifier(provider),
        custom_starlette_routes=routes,
        host="127.0.0.1",
    )
    return _Recorded(app, seen, provider.resource)


class _Recorded:
    """Records each request, and refuses token requests without this server's `resource`."""

    def __init__(self, app: ASGIApp, seen: SeenRequests, resource: str) -> None:
        self.app = app
        self.seen = seen
        self.resource = resource

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path = scope["path"]
        params: dict[str, Any] = dict(parse_qsl(scope.get("query_string", b"").decode("latin-1")))
        if path == MCP_PATH:
            self.seen.add(SeenRequest(scope["method"], path, params))
            await self.app(scope, receive, send)
            return
        messages: list[Message] = []
        body = b""
        while True:
            message = await receive()
            messages.append(message)
            body += message.get("body", b"")
            if message["type"] != "http.request" or not message.get("more_body"):
                break
        params.update(_body_params(scope, body))
        self.seen.add(SeenRequest(scope["method"], path, params))
        if (
            path == TOKEN_PATH
            and scope["method"] == "POST"
            and params.get("grant_type") in ("authorization_code", "refresh_token")
            and not same_resource(params.get("resource"), self.resource)
        ):
            refusal = JSONResponse(
                {"error": "invalid_target", "error_description": f"resource must be {self.resource}"},
                status_code=400,
                headers={"Cache-Control": "no-store"},
            )
            await refusal(scope, receive, send)
            return
        replay = iter(messages)

        async def replayed() -> Message:
            return next(replay, None) or await receive()

        await self.app(scope, replayed, send)


def _body_params(scope: Scope, body: bytes) -> dict[str, Any]:
    headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers") or []}
    kind = headers.get("content-type", "").split(";")[0].strip()
    text = body.decode("utf-8", errors="replace")
    if kind == "application/x-www-form-urlencoded":
        return dict(parse_qsl(text))
    if kind == "application/json":
        try:
            parsed = json.loads(text)
        except ValueError:
            return {}
        return parsed if isinstance(parsed, dict) else {}
    return {}


def _sign_in_page(provider: SignInProvider) -> Any:
    async def page(request: Request) -> Response:
        if request.method == "GET":
            request_id = request.query_params.get("request", "")
            return _page(provider, request_id) if provider.waiting(request_id) else _gone()
        form = await request.form()
        request_id = str(form.get("request", ""))
        if form.get("decision") == "deny":
            declined = provider.decline_sign_in(request_id)
            return RedirectResponse(declined, status_code=302) if declined else _gone()
        name = " ".join(str(form.get("name", "")).split())
        if not provider.waiting(request_id):
            return _gone()
        if not name or len(name) > LONGEST_NAME:
            problem = f"Type a name to sign in as (at most {LONGEST_NAME} characters)."
            return _page(provider, request_id, problem, status=400)
        signed_in = provider.complete_sign_in(request_id, name)
        return RedirectResponse(signed_in, status_code=302) if signed_in else _gone()

    return page


TITLE = "Sign in to the example notes server"


def _page(provider: SignInProvider, request_id: str, problem: str = "", status: int = 200) -> HTMLResponse:
    waiting = provider.waiting(request_id)
    assert waiting is not None
    client = html.escape(waiting.client.client_name or waiting.client.client_id)
    scopes = html.escape(" ".join(waiting.params.scopes or provider.scopes))
    alert = f'<p role="alert">{html.escape(problem)}</p>\n' if problem else ""
    body = (
        f"<h1>{TITLE}</h1>\n"
        f"<p><strong>{client}</strong> asks to read and add to your notes (scopes: {scopes}).</p>\n"
        f"{alert}"
        f'<form method="post" action="{SIGN_IN_PATH}">\n'
        f'<input type="hidden" name="request" value="{html.escape(request_id)}">\n'
        f'<label for="name">Sign in to the example notes server as</label>\n'
        f'<input id="name" name="name" autocomplete="username" required maxlength="{LONGEST_NAME}">\n'
        '<button type="submit" name="decision" value="allow">Sign in</button>\n'
        '<button type="submit" name="decision" value="deny" formnovalidate>Cancel</button>\n'
        "</form>"
    )
    return _html(body, status)


def _gone() -> HTMLResponse:
    return _html(
        f"<h1>{TITLE}</h1>\n<p>This sign-in is unknown or already answered: start again from the app.</p>",
        400,
    )


def _html(body: str, status: int) -> HTMLResponse:
    document = (
        '<!doctype html>\n<html lang="en">\n<head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{TITLE}</title></head>\n<body><main>\n{body}\n</main></body>\n</html>\n"
    )
    return HTMLResponse(document, status_code=status, headers={"Cache-Control": "no-store"})
