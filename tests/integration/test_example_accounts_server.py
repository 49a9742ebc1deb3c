"""The example notes server (`stepwise_local.example_notes`) as a faithful stand-in for an outside MCP server
that signs people in with OAuth: driven by the MCP SDK's own OAuth client (`OAuthClientProvider`, its
redirect and callback handlers played by the browser helper) over Streamable HTTP, and by plain HTTP for what
that client never sends. Discovery, dynamic registration, PKCE S256, `resource` everywhere, a tool call with
the token, each person's token reaching only their own notes, 401 without a token, refresh after expiry,
rotation, revocation, and the sign-in page itself."""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import anyio
import anyio.to_thread
import httpx2
import pytest
import requests
from mcp import Client
from mcp.client.auth import AuthorizationCodeResult, OAuthClientProvider, PKCEParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata, OAuthToken
from mcp.types import CallToolResult
from support.mcp_client import INITIALIZE

from stepwise_local.example_notes.browser import SignInFailed, decline, read_form, sign_in
from stepwise_local.example_notes.server import ExampleNotesServer

CALLBACK = "http://127.0.0.1:9/oauth/callback"  # never opened: the browser helper stops before it


class MovableClock:
    """The server's clock, which a test moves ahead."""

    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> MovableClock:
    return MovableClock()


@pytest.fixture
def server(clock: MovableClock) -> Iterator[ExampleNotesServer]:
    with ExampleNotesServer(access_token_seconds=600, clock=clock) as served:
        yield served


class Person:
    """One person using the SDK's OAuth client: their token storage and their sign-ins in the browser."""

    def __init__(self, server: ExampleNotesServer, name: str) -> None:
        self.name = name
        self.tokens: OAuthToken | None = None
        self.client_info: OAuthClientInformationFull | None = None
        self.sign_ins: list[str] = []  # the callback URLs the browser reached, in order
        self.oauth = OAuthClientProvider(
            server_url=server.mcp_url,
            client_metadata=OAuthClientMetadata(
                client_name=f"{name}'s assistant",
                redirect_uris=[CALLBACK],  # type: ignore[list-item]
                grant_types=["authorization_code", "refresh_token"],
                response_types=["code"],
            ),
            storage=self,
            redirect_handler=self._open_in_browser,
            callback_handler=self._callback,
        )

    # the SDK's TokenStorage
    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client_info

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client_info = client_info

    async def _open_in_browser(self, authorization_url: str) -> None:
        self.sign_ins.append(await anyio.to_thread.run_sync(sign_in, authorization_url, self.name))

    async def _callback(self) -> AuthorizationCodeResult:
        query = parse_qs(urlsplit(self.sign_ins[-1]).query)
        return AuthorizationCodeResult(code=query["code"][0], state=query["state"][0])

    def call(self, server: ExampleNotesServer, *calls: tuple[str, dict[str, Any]]) -> list[CallToolResult]:
        """The tool calls in one MCP session of the SDK's client, signing in first when it must."""

        async def session() -> list[CallToolResult]:
            async with (
                httpx2.AsyncClient(auth=self.oauth, timeout=30) as http,
                Client(streamable_http_client(server.mcp_url, http_client=http)) as client,
            ):
                return [await client.call_tool(name, arguments) for name, arguments in calls]

        return anyio.run(session)


def notes_of(result: CallToolResult) -> list[str]:
    assert not result.is_error, result.content
    assert result.structured_content is not None
    return list(result.structured_content["notes"])


def mcp_post(server: ExampleNotesServer, token: str | None) -> requests.Response:
    headers = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
    if token is not None:
        headers["authorization"] = f"Bearer {token}"
    return requests.post(server.mcp_url, json=INITIALIZE, headers=headers, timeout=30)


def token_request(server: ExampleNotesServer, person: Person, **form: str) -> requests.Response:
    assert person.client_info is not None and person.client_info.client_secret is not None
    sent = {
        "client_id": person.client_info.client_id,
        "client_secret": person.client_info.client_secret,
        **form,
    }
    return requests.post(server.url + "/token", data=sent, timeout=30)


def refresh(server: ExampleNotesServer, person: Person, refresh_token: str, **form: str) -> requests.Response:
    fields = {
        "grant_type": "refresh_token",
        "refresh_token": refresh_token,
        "resource": server.mcp_url,
        **form,
    }
    return token_request(server, person, **fields)


def test_the_sdk_client_discovers_registers_signs_in_with_pkce_and_calls_a_tool(
    server: ExampleNotesServer,
) -> None:
    ana = Person(server, "Ana")
    added, listed = ana.call(server, ("add_note", {"text": "buy milk"}), ("list_notes", {}))

    assert notes_of(added) == ["buy milk"] and notes_of(listed) == ["buy milk"]
    assert [(c.person, c.tool) for c in server.notes.calls] == [("Ana", "add_note"), ("Ana", "list_notes")]
    assert len(ana.sign_ins) == 1
    paths = [r.path for r in server.seen.all if r.path != "/mcp"]
    assert paths[:5] == [  # after the first /mcp request's 401
        "/.well-known/oauth-protected-resource/mcp",
        "/.well-known/oauth-authorization-server",
        "/register",
        "/authorize",
        "/sign-in",
    ]
    (registration,) = server.seen.to("/register")
    assert registration.params["redirect_uris"] == [CALLBACK]
    (authorization,) = server.seen.to("/authorize")
    assert authorization.params["resource"] == server.mcp_url
    assert authorization.params["scope"] == "notes"  # the resource metadata's scopes_supported
    assert authorization.params["code_challenge_method"] == "S256"
    (exchange,) = server.seen.to("/token")
    assert exchange.params["grant_type"] == "authorization_code"
    assert exchange.params["resource"] == server.mcp_url
    verifier = exchange.params["code_verifier"]
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    assert challenge == authorization.params["code_challenge"]
    assert ana.tokens is not None and ana.tokens.refresh_token and ana.tokens.expires_in == 600
    assert mcp_post(server, ana.tokens.access_token).status_code == 200


def test_each_persons_token_reaches_only_their_own_notes(server: ExampleNotesServer) -> None:
    ana, bo = Person(server, "Ana"), Person(server, "Bo")
    ana.call(server, ("add_note", {"text": "Ana's dentist"}))
    bo.call(server, ("add_note", {"text": "Bo's train"}))

    (ana_list,) = ana.call(server, ("list_notes", {}))
    (bo_list,) = bo.call(server, ("list_notes", {}))

    assert notes_of(ana_list) == ["Ana's dentist"]
    assert notes_of(bo_list) == ["Bo's train"]
    assert server.notes.of("Ana") == ["Ana's dentist"] and server.notes.of("Bo") == ["Bo's train"]
    assert ana.client_info is not None and bo.client_info is not None
    assert ana.client_info.client_id != bo.client_info.client_id  # each registered a client of their own


def test_mcp_answers_401_naming_the_resource_metadata_without_a_token_of_its_own(
    server: ExampleNotesServer,
) -> None:
    with ExampleNotesServer() as other:
        someone = Person(other, "Someone")
        someone.call(other, ("list_notes", {}))
    assert someone.tokens is not None

    for token in (None, "not-a-token", someone.tokens.access_token):  # the last: another server's token
        refused = mcp_post(server, token)
        assert refused.status_code == 401
        challenge = refused.headers["www-authenticate"]
        assert challenge.startswith("Bearer ")
        assert f'resource_metadata="{server.url}/.well-known/oauth-protected-resource/mcp"' in challenge

    for path in ("/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"):
        metadata = requests.get(server.url + path, timeout=30).json()
        assert metadata["resource"] == server.mcp_url
        assert metadata["authorization_servers"] == [server.url]
        assert metadata["scopes_supported"] == ["notes"]
    issuer = requests.get(server.url + "/.well-known/oauth-authorization-server", timeout=30).json()
    assert issuer["issuer"] == server.url
    assert issuer["registration_endpoint"] == server.url + "/register"
    assert issuer["revocation_endpoint"] == server.url + "/revoke"
    assert issuer["code_challenge_methods_supported"] == ["S256"]


def test_the_sdk_client_refreshes_an_expired_access_token_without_signing_in_again(
    server: ExampleNotesServer, clock: MovableClock
) -> None:
    ana = Person(server, "Ana")
    ana.call(server, ("add_note", {"text": "first"}))
    assert ana.tokens is not None
    first = ana.tokens

    clock.now += 600  # the access token's lifetime passes, for the server...
    assert ana.oauth.context.token_expiry_time is not None
    ana.oauth.context.token_expiry_time -= 600  # ...and for the SDK's client, which reads time.time()
    assert mcp_post(server, first.access_token).status_code == 401
    (listed,) = ana.call(server, ("list_notes", {}))

    assert notes_of(listed) == ["first"]
    assert len(ana.sign_ins) == 1  # refreshed, not signed in again
    grants = [r.params["grant_type"] for r in server.seen.to("/token")]
    assert grants == ["authorization_code", "refresh_token"]
    assert server.seen.to("/token")[-1].params["resource"] == server.mcp_url
    assert ana.tokens.access_token != first.access_token
    assert ana.tokens.refresh_token not in (None, first.refresh_token)  # rotated
    assert mcp_post(server, ana.tokens.access_token).status_code == 200


def test_a_rotated_refresh_token_is_refused_after_use_and_a_refresh_must_name_the_resource(
    server: ExampleNotesServer,
) -> None:
    ana = Person(server, "Ana")
    ana.call(server, ("list_notes", {}))
    assert ana.tokens is not None and ana.tokens.refresh_token is not None
    used = ana.tokens.refresh_token

    without_resource = token_request(server, ana, grant_type="refresh_token", refresh_token=used)
    assert (without_resource.status_code, without_resource.json()["error"]) == (400, "invalid_target")
    elsewhere = refresh(server, ana, used, resource="http://127.0.0.1:9/mcp")
    assert (elsewhere.status_code, elsewhere.json()["error"]) == (400, "invalid_target")
    rotated = refresh(server, ana, used)
    assert rotated.status_code == 200, rotated.text
    again = refresh(server, ana, used)
    assert (again.status_code, again.json()["error"]) == (400, "invalid_grant")

    newer = rotated.json()
    assert newer["refresh_token"] != used and newer["expires_in"] == 600
    assert refresh(server, ana, newer["refresh_token"]).status_code == 200
    assert mcp_post(server, newer["access_token"]).status_code == 200
    assert mcp_post(server, ana.tokens.access_token).status_code == 200  # earlier access tokens live on


@pytest.mark.parametrize("revoked", ["refresh_token", "access_token"])
def test_revoking_either_token_revokes_the_sign_in(server: ExampleNotesServer, revoked: str) -> None:
    ana, bo = Person(server, "Ana"), Person(server, "Bo")
    ana.call(server, ("list_notes", {}))
    bo.call(server, ("list_notes", {}))
    assert ana.tokens is not None and ana.tokens.refresh_token is not None and bo.tokens is not None
    assert ana.client_info is not None and ana.client_info.client_secret is not None

    answer = requests.post(
        server.url + "/revoke",
        data={
            "token": getattr(ana.tokens, revoked),
            "token_type_hint": revoked,
            "client_id": ana.client_info.client_id,
            "client_secret": ana.client_info.client_secret,
        },
        timeout=30,
    )

    assert answer.status_code == 200
    assert mcp_post(server, ana.tokens.access_token).status_code == 401
    assert refresh(server, ana, ana.tokens.refresh_token).json()["error"] == "invalid_grant"
    assert server.provider.live_access_tokens("Ana") == 0
    assert mcp_post(server, bo.tokens.access_token).status_code == 200  # nobody else's


def register(server: ExampleNotesServer) -> dict[str, Any]:
    metadata = {"redirect_uris": [CALLBACK], "client_name": "a test client", "scope": "notes"}
    answer = requests.post(server.url + "/register", json=metadata, timeout=30)
    assert answer.status_code == 201, answer.text
    return dict(answer.json())


def authorization_url(
    server: ExampleNotesServer, client: dict[str, Any], pkce: PKCEParameters, **extra: str
) -> str:
    query = {
        "response_type": "code",
        "client_id": client["client_id"],
        "redirect_uri": CALLBACK,
        "state": "state-1",
        "code_challenge": pkce.code_challenge,
        "code_challenge_method": "S256",
        "resource": server.mcp_url,
        "scope": "notes",
        **extra,
    }
    return f"{server.url}/authorize?{urlencode(query)}"


def exchange(
    server: ExampleNotesServer, client: dict[str, Any], code: str, verifier: str
) -> requests.Response:
    form = {
        "grant_type": "authorization_code",
        "code": code,
        "code_verifier": verifier,
        "redirect_uri": CALLBACK,
        "resource": server.mcp_url,
        "client_id": client["client_id"],
        "client_secret": client["client_secret"],
    }
    return requests.post(server.url + "/token", data=form, timeout=30)


def test_a_code_needs_its_pkce_verifier_and_is_good_once(server: ExampleNotesServer) -> None:
    client, pkce = register(server), PKCEParameters.generate()
    callback = sign_in(authorization_url(server, client, pkce), "Ana")
    assert callback.startswith(CALLBACK + "?")
    query = parse_qs(urlsplit(callback).query)
    assert query["state"] == ["state-1"]
    code = query["code"][0]

    wrong = exchange(server, client, code, PKCEParameters.generate().code_verifier)
    assert (wrong.status_code, wrong.json()["error"]) == (400, "invalid_grant")
    right = exchange(server, client, code, pkce.code_verifier)
    assert right.status_code == 200, right.text
    replayed = exchange(server, client, code, pkce.code_verifier)
    assert (replayed.status_code, replayed.json()["error"]) == (400, "invalid_grant")


def test_the_sign_in_page_asks_for_a_name_and_can_be_declined(server: ExampleNotesServer) -> None:
    client, pkce = register(server), PKCEParameters.generate()
    browser = requests.Session()
    to_page = browser.get(authorization_url(server, client, pkce), allow_redirects=False, timeout=30)
    assert to_page.status_code == 302
    page = browser.get(to_page.headers["location"], timeout=30)
    assert page.status_code == 200
    assert "Sign in to the example notes server" in page.text and "a test client" in page.text
    form = read_form(page.text)
    assert form.labels[form.text_fields["name"]] == "Sign in to the example notes server as"
    request_id = form.fields["request"]

    nameless = browser.post(
        server.url + "/sign-in", data={"request": request_id, "name": "  ", "decision": "allow"}, timeout=30
    )
    assert nameless.status_code == 400 and 'role="alert"' in nameless.text
    declined = decline(page.url, browser)
    assert parse_qs(urlsplit(declined).query) == {
        "error": ["access_denied"],
        "error_description": ["The person declined to sign in."],
        "state": ["state-1"],
    }
    with pytest.raises(SignInFailed, match="400"):  # the request was answered: its page is gone
        sign_in(page.url, "Ana", browser)


def test_an_authorization_request_for_another_resource_is_refused(server: ExampleNotesServer) -> None:
    client, pkce = register(server), PKCEParameters.generate()

    refused = sign_in(authorization_url(server, client, pkce, resource="http://127.0.0.1:9/mcp"), "Ana")

    assert refused.startswith(CALLBACK + "?")
    query = parse_qs(urlsplit(refused).query)
    assert query["error"] == ["invalid_target"] and query["state"] == ["state-1"]
    assert server.seen.to("/sign-in") == []  # nobody was asked to sign in
