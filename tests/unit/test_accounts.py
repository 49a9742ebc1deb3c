"""People's accounts at outside MCP servers, without sockets: the token cipher and its SSM key, and the OAuth
flow (discovery, registration, PKCE, state, the callback's failures, refresh, revocation) against canned
answers of an authorization server, on the in-memory store."""

from __future__ import annotations

import base64
import hashlib
import logging
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import pytest
from botocore.exceptions import ClientError
from cryptography.fernet import Fernet
from support.scripted_http import Answer, SentRequest, canned, refused
from support.secret_forms import forms

from stepwise.accounts.cipher import CipherError, TokenCipher, ssm_key
from stepwise.accounts.flow import AccountFlow, CannotConnect, Disconnected, SignInFailed
from stepwise.accounts.models import Account
from stepwise.aws.http_transport import HttpTransport
from stepwise.remote_tools.config import ServerEntry
from stepwise_local.in_memory.accounts import InMemoryAccountStore
from stepwise_local.in_memory.reminders import InMemoryReminderStore

# ------------------------------------------------------------------------------------------------- cipher


def test_a_sealed_token_opens_only_with_its_key_in_its_context_and_shows_nothing_of_itself() -> None:
    cipher = TokenCipher(Fernet.generate_key())
    sealed = cipher.seal("ya29.a-token-nobody-may-read", "account#7#calendar")
    assert cipher.open(sealed, "account#7#calendar") == "ya29.a-token-nobody-may-read"
    assert not any(form in sealed for form in forms("ya29.a-token-nobody-may-read"))
    assert cipher.seal("same", "c") != cipher.seal("same", "c"), "each sealing is fresh"
    with pytest.raises(CipherError, match="another item"):
        cipher.open(sealed, "account#8#calendar")
    with pytest.raises(CipherError, match="does not open"):
        TokenCipher(Fernet.generate_key()).open(sealed, "account#7#calendar")
    with pytest.raises(CipherError):
        cipher.open(sealed[:-4] + "AAAA", "account#7#calendar")


class FakeSsm:
    """GetParameter and PutParameter as SSM answers them (`Overwrite=False` refuses an existing name); with
    `racer`, another function's put lands between this one's read and its put."""

    def __init__(self, values: dict[str, str] | None = None, racer: str | None = None) -> None:
        self.values = dict(values or {})
        self.racer = racer
        self.puts: list[dict[str, Any]] = []

    def get_parameter(self, Name: str, WithDecryption: bool) -> dict[str, Any]:
        assert WithDecryption
        if Name not in self.values:
            raise ClientError({"Error": {"Code": "ParameterNotFound"}}, "GetParameter")
        return {"Parameter": {"Name": Name, "Value": self.values[Name]}}

    def put_parameter(self, **kwargs: Any) -> dict[str, Any]:
        self.puts.append(kwargs)
        assert kwargs["Type"] == "SecureString" and kwargs["Overwrite"] is False
        if self.racer is not None:
            self.values[kwargs["Name"]] = self.racer
        if kwargs["Name"] in self.values:
            raise ClientError({"Error": {"Code": "ParameterAlreadyExists"}}, "PutParameter")
        self.values[kwargs["Name"]] = kwargs["Value"]
        return {"Version": 1}


def test_the_key_is_made_on_first_use_and_read_back_after() -> None:
    ssm = FakeSsm()
    key = ssm_key(ssm, "/stepwise/accounts/key")
    assert ssm.values["/stepwise/accounts/key"] == key.decode() and len(ssm.puts) == 1
    assert ssm_key(ssm, "/stepwise/accounts/key") == key and len(ssm.puts) == 1
    TokenCipher(key)


def test_when_two_functions_make_the_key_at_once_the_first_writer_wins_and_both_read_it() -> None:
    first = Fernet.generate_key().decode()
    ssm = FakeSsm(racer=first)
    assert ssm_key(ssm, "/k") == first.encode()
    assert ssm.values["/k"] == first and len(ssm.puts) == 1


def test_a_parameter_that_is_no_fernet_key_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="/k does not hold a Fernet key"):
        ssm_key(FakeSsm({"/k": "not a key"}), "/k")


def test_an_accounts_repr_shows_no_secret() -> None:
    account = Account(7, "cal", "access-secret", "refresh-secret", 10, "s", "2026-11-30T09:00:00Z")
    assert "secret" not in repr(account) and "secret" not in str([account])


# ---------------------------------------------------------------------------------- an authorization server
MCP = "https://cal.example/mcp"
AUTH = "https://auth.example"
REDIRECT = "https://stepwise.example/oauth/callback"
NOW = 1_800_000_000


class Routes:
    """Stands in for urllib3's pool: answers each request by its method and URL (without the query) from a
    table, an answer or a list used in turn (the last one repeats); unknown URLs get 404. Keeps the
    requests."""

    def __init__(self, table: dict[tuple[str, str], Answer | list[Answer]]) -> None:
        self.table = table
        self.requests: list[SentRequest] = []

    def urlopen(self, method: str, url: str, redirect: bool = True, **kw: Any) -> Any:
        assert redirect is False
        sent = SentRequest(method, url, kw["headers"], kw.get("body"), kw["timeout"], {})
        self.requests.append(sent)
        parts = urlsplit(url)
        answer = self.table.get((method, f"{parts.scheme}://{parts.netloc}{parts.path}"), (404, {}))
        if isinstance(answer, list):
            answer = answer.pop(0) if len(answer) > 1 else answer[0]
        if isinstance(answer, Exception):
            raise answer
        return canned(answer).response(method, url, kw.get("preload_content", True))

    def sent(self, method: str, url: str) -> list[SentRequest]:
        return [r for r in self.requests if r.method == method and r.url.split("?")[0] == url]


def form(request: SentRequest) -> dict[str, str]:
    return dict(parse_qsl((request.body or b"").decode()))


def resource_metadata(**changes: Any) -> dict[str, Any]:
    return {
        "resource": MCP,
        "authorization_servers": [AUTH],
        "scopes_supported": ["cal.read", "cal.write"],
    } | changes


def server_metadata(**changes: Any) -> dict[str, Any]:
    return {
        "issuer": AUTH,
        "authorization_endpoint": f"{AUTH}/authorize",
        "token_endpoint": f"{AUTH}/token",
        "registration_endpoint": f"{AUTH}/register",
        "revocation_endpoint": f"{AUTH}/revoke",
        "response_types_supported": ["code"],
        "code_challenge_methods_supported": ["S256"],
    } | changes


def token(access: str = "access-1", refresh: str | None = "refresh-1", expires_in: int | None = 3600) -> Any:
    body: dict[str, Any] = {"access_token": access, "token_type": "bearer"}
    if refresh is not None:
        body["refresh_token"] = refresh
    if expires_in is not None:
        body["expires_in"] = expires_in
    return (200, body)


def oauth_server(
    more: dict[tuple[str, str], Answer] | None = None, **changes: Answer | list[Answer]
) -> dict[tuple[str, str], Answer | list[Answer]]:
    """The routes of a server that follows the spec; `changes` replace some, by name; `more` adds others."""
    routes: dict[str, Answer | list[Answer]] = {
        "probe": (401, {}, {"WWW-Authenticate": 'Bearer resource_metadata="https://cal.example/meta"'}),
        "resource": (200, resource_metadata()),
        "server": (200, server_metadata()),
        "register": (201, {"client_id": "client-1", "client_secret": "client-secret-1"}),
        "token": token(),
        "revoke": (200, b""),
    } | changes
    urls = {
        "probe": ("POST", MCP),
        "resource": ("GET", "https://cal.example/meta"),
        "server": ("GET", f"{AUTH}/.well-known/oauth-authorization-server"),
        "register": ("POST", f"{AUTH}/register"),
        "token": ("POST", f"{AUTH}/token"),
        "revoke": ("POST", f"{AUTH}/revoke"),
    }
    return {urls[name]: answer for name, answer in routes.items()} | (more or {})


class Clock:
    def __init__(self) -> None:
        self.now = float(NOW)

    def __call__(self) -> float:
        return self.now


ENTRY = ServerEntry(name="cal", url=MCP, auth="oauth")


def flow_for(
    routes: Routes,
    entries: tuple[ServerEntry, ...] = (ENTRY,),
    parameters: dict[str, str] | None = None,
    *,
    marks: InMemoryReminderStore | None = None,
    store: InMemoryAccountStore | None = None,
) -> tuple[AccountFlow, InMemoryAccountStore, Clock]:
    store, clock = store or InMemoryAccountStore(), Clock()
    flow = AccountFlow(
        store,
        HttpTransport(routes),
        lambda: entries,
        lambda name: (parameters or {})[name],
        marks=marks or InMemoryReminderStore(),
        state_minutes=10,
        now=clock,
    )
    return flow, store, clock


def query(url: str) -> dict[str, str]:
    return dict(parse_qsl(urlsplit(url).query))


def s256(verifier: str) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).decode().rstrip("=")


# ----------------------------------------------------------------------------------------------- sign-in
def test_a_sign_in_sends_the_person_to_the_authorization_endpoint_with_pkce_state_resource_and_scope() -> (
    None
):
    routes = Routes(oauth_server())
    flow, store, _ = flow_for(routes)
    started = flow.start_sign_in(7, ENTRY, REDIRECT)
    assert started.url.startswith(f"{AUTH}/authorize?") and started.expires_at == NOW + 600
    params = query(started.url)
    (pending,) = store.sign_ins.values()
    assert params == {
        "response_type": "code",
        "client_id": "client-1",
        "redirect_uri": REDIRECT,
        "state": pending.state,
        "code_challenge": s256(pending.code_verifier),
        "code_challenge_method": "S256",
        "resource": MCP,
        "scope": "cal.read cal.write",  # the resource's scopes_supported
    }
    assert len(pending.state) >= 43, "at least 256 bits, base64url"
    assert (pending.user_id, pending.server, pending.redirect_uri, pending.resource) == (
        7,
        "cal",
        REDIRECT,
        MCP,
    )
    assert (pending.made_at, pending.expires_at) == (NOW, NOW + 600)
    (registration,) = routes.sent("POST", f"{AUTH}/register")
    assert registration.json() | {"redirect_uris": [REDIRECT]} == registration.json()
    assert registration.json()["scope"] == "cal.read cal.write"
    assert registration.json()["grant_types"] == ["authorization_code", "refresh_token"]
    again = flow.start_sign_in(8, ENTRY, REDIRECT)
    assert query(again.url)["state"] != pending.state and query(again.url)["client_id"] == "client-1"
    assert len(routes.sent("POST", f"{AUTH}/register")) == 1, "registered once, then kept"
    assert len(routes.sent("GET", f"{AUTH}/.well-known/oauth-authorization-server")) == 1, "discovered once"


def test_the_scope_is_the_entrys_else_the_resources_else_none() -> None:
    entry = ServerEntry(name="cal", url=MCP, auth="oauth", scopes=("cal.read", "offline_access"))
    flow, _, _ = flow_for(Routes(oauth_server()), (entry,))
    assert query(flow.start_sign_in(7, entry, REDIRECT).url)["scope"] == "cal.read offline_access"
    flow, _, _ = flow_for(Routes(oauth_server(resource=(200, resource_metadata(scopes_supported=None)))))
    assert "scope" not in query(flow.start_sign_in(7, ENTRY, REDIRECT).url)


def test_without_a_pointer_the_metadata_is_found_at_the_well_known_urls_and_openid_configuration() -> None:
    routes = Routes(
        oauth_server(
            {
                ("GET", "https://cal.example/.well-known/oauth-protected-resource/mcp"): (
                    200,
                    resource_metadata(),
                ),
                ("GET", f"{AUTH}/.well-known/openid-configuration"): (200, server_metadata()),
            },
            probe=(401, {}),
            resource=(404, {}),
            server=(404, {}),
        )
    )
    flow, _, _ = flow_for(routes)
    assert query(flow.start_sign_in(7, ENTRY, REDIRECT).url)["client_id"] == "client-1"
    assert [r.url for r in routes.requests if r.method == "GET"] == [
        "https://cal.example/.well-known/oauth-protected-resource/mcp",
        f"{AUTH}/.well-known/oauth-authorization-server",
        f"{AUTH}/.well-known/openid-configuration",
    ]


def test_a_configured_client_is_used_with_basic_authentication_and_nothing_is_registered() -> None:
    entry = ServerEntry(
        name="cal",
        url=MCP,
        auth="oauth",
        client_id_parameter="/p/id",
        client_secret_parameter="/p/secret",
    )
    routes = Routes(oauth_server(server=(200, server_metadata(registration_endpoint=None))))
    flow, store, _ = flow_for(routes, (entry,), {"/p/id": "my id", "/p/secret": "my:secret"})
    started = flow.start_sign_in(7, entry, REDIRECT)
    assert query(started.url)["client_id"] == "my id"
    account = flow.finish_sign_in(query(started.url)["state"], "code-1", None)
    assert isinstance(account, Account)
    (exchange,) = routes.sent("POST", f"{AUTH}/token")
    assert exchange.headers["Authorization"] == "Basic " + base64.b64encode(b"my%20id:my%3Asecret").decode()
    assert "client_secret" not in form(exchange) and form(exchange)["client_id"] == "my id"
    assert routes.sent("POST", f"{AUTH}/register") == [] and store.clients == {}


@pytest.mark.parametrize(
    ("changes", "why"),
    [
        ({"probe": refused("cal.example")}, "cal.example is unreachable"),
        ({"server": (404, {}), "resource": (404, {})}, "publishes no authorization server metadata"),
        ({"server": (200, server_metadata(code_challenge_methods_supported=None))}, "PKCE with S256"),
        ({"server": (200, server_metadata(code_challenge_methods_supported=["plain"]))}, "PKCE with S256"),
        ({"server": (200, server_metadata(registration_endpoint=None))}, "no client registration"),
        ({"server": (200, server_metadata(issuer="https://evil.example"))}, "names itself https://evil"),
        ({"server": (200, server_metadata(token_endpoint="http://auth.example/token"))}, "not all https"),
        ({"resource": (200, resource_metadata(resource="https://other.example/mcp"))}, "another resource"),
        ({"register": (400, {"error": "invalid_client_metadata"})}, "registration answered 400"),
    ],
)
def test_a_server_that_offers_no_way_to_sign_in_cannot_be_connected_and_nothing_is_kept(
    changes: dict[str, Any], why: str
) -> None:
    flow, store, _ = flow_for(Routes(oauth_server(**changes)))
    with pytest.raises(CannotConnect, match=why):
        flow.start_sign_in(7, ENTRY, REDIRECT)
    assert store.sign_ins == {} and store.clients == {}


def test_http_is_refused_for_servers_off_this_machine() -> None:
    entry = ServerEntry(name="cal", url="http://127.0.0.1:9/mcp", auth="oauth")
    local = {
        ("POST", "http://127.0.0.1:9/mcp"): (
            401,
            {},
            {"WWW-Authenticate": 'Bearer resource_metadata="http://a.example/m"'},
        ),
    }
    routes = Routes(local)
    flow, _, _ = flow_for(routes, (entry,))
    with pytest.raises(CannotConnect, match="no authorization server metadata"):
        flow.start_sign_in(7, entry, REDIRECT)
    assert all(urlsplit(r.url).hostname == "127.0.0.1" for r in routes.requests), (
        "the plain-http pointer is not read"
    )


# ------------------------------------------------------------------------------------------- the callback
def started(flow: AccountFlow) -> str:
    return query(flow.start_sign_in(7, ENTRY, REDIRECT).url)["state"]


def test_the_callback_exchanges_the_code_with_the_verifier_and_keeps_the_account() -> None:
    routes = Routes(oauth_server())
    flow, store, clock = flow_for(routes)
    state = started(flow)
    verifier = store.sign_ins[state].code_verifier
    clock.now += 60
    account = flow.finish_sign_in(state, "the-code", None)
    assert isinstance(account, Account)
    assert (account.user_id, account.server, account.access_token, account.refresh_token) == (
        7,
        "cal",
        "access-1",
        "refresh-1",
    )
    assert account.expires_at == NOW + 60 + 3600 and account.connected_at == "2027-01-15T08:01:00Z"
    assert store.get(7, "cal") == account and store.sign_ins == {}
    (exchange,) = routes.sent("POST", f"{AUTH}/token")
    assert form(exchange) == {
        "grant_type": "authorization_code",
        "code": "the-code",
        "redirect_uri": REDIRECT,
        "code_verifier": verifier,
        "resource": MCP,
        "client_id": "client-1",
    }
    # The registration named no method: RFC 7591's default, HTTP Basic.
    assert (
        exchange.headers["Authorization"] == "Basic " + base64.b64encode(b"client-1:client-secret-1").decode()
    )


@pytest.mark.parametrize(
    ("state", "code", "error", "kind"),
    [
        ("never-made", "c", None, "unknown"),
        (None, "c", None, "unknown"),
        ("", "c", None, "unknown"),
        ("started", None, "access_denied", "refused"),
        ("started", None, None, "no_code"),
        ("started", "", None, "no_code"),
    ],
)
def test_a_callback_without_a_usable_code_keeps_nothing_and_uses_its_state_up(
    state: str | None, code: str | None, error: str | None, kind: str
) -> None:
    routes = Routes(oauth_server())
    flow, store, _ = flow_for(routes)
    real = started(flow)
    failed = flow.finish_sign_in(real if state == "started" else state, code, error)
    assert isinstance(failed, SignInFailed) and failed.kind == kind
    assert (failed.user_id, failed.server) == ((7, "cal") if state == "started" else (None, None))
    assert store.accounts == {} and routes.sent("POST", f"{AUTH}/token") == []
    if state == "started":
        again = flow.finish_sign_in(real, "a-code", None)
        assert isinstance(again, SignInFailed) and again.kind == "unknown", "the state was used up"


def test_a_state_used_once_or_after_it_expired_is_refused() -> None:
    flow, _, clock = flow_for(Routes(oauth_server()))
    state = started(flow)
    assert isinstance(flow.finish_sign_in(state, "code", None), Account)
    replay = flow.finish_sign_in(state, "code", None)
    assert isinstance(replay, SignInFailed) and replay.kind == "unknown"
    late = started(flow)
    clock.now += 600
    expired = flow.finish_sign_in(late, "code", None)
    assert isinstance(expired, SignInFailed) and (expired.kind, expired.user_id) == ("expired", 7)
    assert "expired" in expired.reason


def test_an_error_answer_is_told_in_its_code_alone() -> None:
    flow, _, _ = flow_for(Routes(oauth_server()))
    failed = flow.finish_sign_in(started(flow), None, "<script>alert(1)</script>")
    assert isinstance(failed, SignInFailed) and "script" not in failed.reason and "an error" in failed.reason


def test_a_refused_exchange_keeps_nothing_and_says_so_without_the_code(
    caplog: pytest.LogCaptureFixture,
) -> None:
    flow, store, _ = flow_for(
        Routes(
            oauth_server(token=(400, {"error": "invalid_grant", "error_description": "code the-code bad"}))
        )
    )
    with caplog.at_level(logging.INFO):
        failed = flow.finish_sign_in(started(flow), "the-code", None)
    assert isinstance(failed, SignInFailed) and failed.kind == "exchange_failed"
    assert "invalid_grant" in failed.reason and "the-code" not in failed.reason + caplog.text
    assert store.accounts == {}


def test_a_token_answer_that_is_no_token_response_is_not_quoted() -> None:
    flow, store, _ = flow_for(
        Routes(oauth_server(token=(200, {"access_token": "leaky", "token_type": "mac"})))
    )
    failed = flow.finish_sign_in(started(flow), "c", None)
    assert isinstance(failed, SignInFailed) and "leaky" not in failed.reason and store.accounts == {}


def test_a_forgotten_client_is_registered_once_more_and_the_exchange_sent_once_more() -> None:
    forgot = (401, {"error": "invalid_client"})
    routes = Routes(
        oauth_server(
            register=[
                (201, {"client_id": "client-1", "client_secret": "s1"}),
                (201, {"client_id": "client-2", "client_secret": "s2"}),
            ],
            token=[forgot, token()],
        )
    )
    flow, store, _ = flow_for(routes)
    assert isinstance(flow.finish_sign_in(started(flow), "c", None), Account)
    assert [form(r)["client_id"] for r in routes.sent("POST", f"{AUTH}/token")] == ["client-1", "client-2"]
    assert store.clients["cal"].client_id == "client-2"
    routes.table[("POST", f"{AUTH}/token")] = [forgot]
    failed = flow.finish_sign_in(started(flow), "c", None)
    assert isinstance(failed, SignInFailed) and "invalid_client" in failed.reason
    assert len(routes.sent("POST", f"{AUTH}/register")) == 3, "once more per request, not in a loop"


# ---------------------------------------------------------------------------------------------- refresh
def connected(routes: Routes) -> tuple[AccountFlow, InMemoryAccountStore, Clock, Account]:
    flow, store, clock = flow_for(routes)
    account = flow.finish_sign_in(started(flow), "c", None)
    assert isinstance(account, Account)
    return flow, store, clock, account


def test_an_expired_access_token_is_refreshed_once_and_the_rotated_refresh_token_kept() -> None:
    routes = Routes(oauth_server(token=[token(), token("access-2", "refresh-2")]))
    flow, store, clock, account = connected(routes)
    assert flow.current(7, "cal") == account, "in its lifetime: no request"
    clock.now += 3600
    fresh = flow.current(7, "cal")
    assert isinstance(fresh, Account)
    assert (fresh.access_token, fresh.refresh_token, fresh.version) == (
        "access-2",
        "refresh-2",
        account.version + 1,
    )
    assert store.get(7, "cal") == fresh
    refresh = routes.sent("POST", f"{AUTH}/token")[-1]
    assert form(refresh) == {
        "grant_type": "refresh_token",
        "refresh_token": "refresh-1",
        "resource": MCP,
        "client_id": "client-1",
    }
    assert flow.current(8, "cal") is None


def test_a_refresh_without_rotation_keeps_the_refresh_token() -> None:
    flow, _, _, account = connected(Routes(oauth_server(token=[token(), token("access-2", None, None)])))
    fresh = flow.refresh(account)
    assert isinstance(fresh, Account) and (fresh.refresh_token, fresh.expires_at) == ("refresh-1", None)


def test_a_refresh_that_lost_the_race_uses_the_kept_account() -> None:
    flow, store, _, account = connected(Routes(oauth_server(token=[token(), token("access-3", "refresh-3")])))
    assert store.replace(
        account._replace(access_token="other-turn", refresh_token="other-rt"), account.version
    )
    fresh = flow.refresh(account)
    assert isinstance(fresh, Account) and fresh.access_token == "other-turn"
    assert store.get(7, "cal").refresh_token == "other-rt", "the older rotation is not kept over the newer"


def test_a_refused_refresh_token_rotated_by_another_turn_gives_the_newer_account() -> None:
    routes = Routes(oauth_server(token=[token(), (400, {"error": "invalid_grant"})]))
    flow, store, _, account = connected(routes)
    assert store.replace(account._replace(access_token="newer", refresh_token="newer-rt"), account.version)
    fresh = flow.refresh(account)
    assert isinstance(fresh, Account) and fresh.access_token == "newer" and store.get(7, "cal") is not None


def test_only_the_newest_refresh_token_refused_disconnects(caplog: pytest.LogCaptureFixture) -> None:
    routes = Routes(oauth_server(token=[token(), (400, {"error": "invalid_grant"})]))
    flow, store, _, account = connected(routes)
    with caplog.at_level(logging.INFO):
        gone = flow.refresh(account)
    assert gone == Disconnected(7, "cal", "the server refused its refresh token")
    assert store.get(7, "cal") is None
    assert "refresh-1" not in caplog.text and "access-1" not in caplog.text


def test_a_refresh_that_fails_otherwise_keeps_the_account() -> None:
    for answer in [(500, {}), (400, {"error": "invalid_scope"}), refused("auth.example")]:
        routes = Routes(oauth_server(token=[token(), answer]))
        flow, store, _, account = connected(routes)
        with pytest.raises(CannotConnect):
            flow.refresh(account)
        assert store.get(7, "cal") == account


def test_an_account_without_a_refresh_token_is_disconnected_when_it_expires() -> None:
    flow, store, clock, _ = connected(Routes(oauth_server(token=token(refresh=None))))
    clock.now += 3600
    assert isinstance(flow.current(7, "cal"), Disconnected) and store.get(7, "cal") is None


def test_a_refresh_after_the_server_forgot_the_client_registers_again() -> None:
    routes = Routes(
        oauth_server(
            register=[
                (201, {"client_id": "client-1", "client_secret": "s1"}),
                (201, {"client_id": "client-2", "client_secret": "s2"}),
            ],
            token=[token(), (401, {"error": "invalid_client"}), token("access-2", "refresh-2")],
        )
    )
    flow, store, _, account = connected(routes)
    fresh = flow.refresh(account)
    assert isinstance(fresh, Account) and fresh.access_token == "access-2"
    assert store.clients["cal"].client_id == "client-2"


# ----------------------------------------------------------------------------------------- disconnecting
def test_disconnect_revokes_both_tokens_then_forgets_the_account() -> None:
    routes = Routes(oauth_server())
    flow, store, _, _ = connected(routes)
    assert flow.disconnect(7, "cal")
    assert [
        (form(r)["token"], form(r)["token_type_hint"]) for r in routes.sent("POST", f"{AUTH}/revoke")
    ] == [
        ("refresh-1", "refresh_token"),
        ("access-1", "access_token"),
    ]
    assert store.get(7, "cal") is None and not flow.disconnect(7, "cal")


@pytest.mark.parametrize("revocation", [(503, {}), refused("auth.example"), None])
def test_a_revocation_that_fails_or_is_not_offered_still_forgets(revocation: Any) -> None:
    changes: dict[str, Any] = {"revoke": revocation} if revocation is not None else {}
    if revocation is None:
        changes["server"] = (200, server_metadata(revocation_endpoint=None))
    routes = Routes(oauth_server(**changes))
    flow, store, _, _ = connected(routes)
    assert flow.disconnect(7, "cal") and store.get(7, "cal") is None
    if revocation is None:
        assert routes.sent("POST", f"{AUTH}/revoke") == []


# ------------------------------------------------------------------------------------------ profile marks
class FailingPut(InMemoryAccountStore):
    def put(self, account: Account) -> Account:
        raise RuntimeError("DynamoDB said no")


def test_the_profile_is_marked_before_an_account_is_kept_and_unmarked_once_it_is_forgotten() -> None:
    """The marks tell a turn whether to read the person's accounts at all: never fewer than the accounts."""
    routes = Routes(oauth_server(token=[token(), (400, {"error": "invalid_grant"}), token("access-2")]))
    marks = InMemoryReminderStore()
    flow, store, _ = flow_for(routes, marks=marks)
    assert isinstance(flow.finish_sign_in(started(flow), "c", None), Account)
    assert marks.profile(7).accounts == {"cal"}
    assert isinstance(flow.refresh(store.get(7, "cal")), Disconnected)  # the newest refresh token refused
    assert marks.profile(7).accounts == frozenset()
    assert isinstance(flow.finish_sign_in(started(flow), "c", None), Account)
    assert flow.disconnect(7, "cal") and marks.profile(7).accounts == frozenset()

    failing, marks = FailingPut(), InMemoryReminderStore()
    flow, _, _ = flow_for(Routes(oauth_server()), marks=marks, store=failing)
    with pytest.raises(RuntimeError):
        flow.finish_sign_in(started(flow), "c", None)
    assert marks.profile(7).accounts == {"cal"}, (
        "marked first: a failed write leaves one query, not lost tools"
    )


def test_accounts_lists_marks_the_profile_of_an_account_kept_before_marks_existed() -> None:
    marks = InMemoryReminderStore()
    flow, store, _ = flow_for(Routes(oauth_server()), marks=marks)
    store.put(Account(7, "cal", "access", "refresh", None, None, "2026-11-20T08:00:00Z"))
    flow.mark_connected(7, ["cal"])
    assert marks.profile(7).accounts == {"cal"}
