"""The Mini App's accounts at OAuth servers, on in-memory stores with a real AccountFlow over a scripted
server: the state lists each server connected (since when) or not and starts no sign-in; Connect starts one
and answers its URL for `openLink`; Disconnect revokes and forgets; nothing of another person's is touched."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

from support.scripted_http import SentRequest, canned

from stepwise.accounts.access import AccountsAccess
from stepwise.accounts.flow import AccountFlow
from stepwise.accounts.models import Account
from stepwise.aws.http_transport import HttpTransport
from stepwise.miniapp.actions import act
from stepwise.miniapp.endpoint import serve
from stepwise.miniapp.gate import AppLimits
from stepwise.miniapp.init_data import WebAppUser, sign
from stepwise.miniapp.page import Page
from stepwise.miniapp.services import AppServices
from stepwise.remote_tools.config import ServerEntry
from stepwise.tools.catalog import build_registry
from stepwise_local.in_memory.accounts import InMemoryAccountStore
from stepwise_local.in_memory.approvals import InMemoryApprovalStore
from stepwise_local.in_memory.audit import InMemoryAuditLog
from stepwise_local.in_memory.chats import InMemoryChatStore
from stepwise_local.in_memory.reminders import InMemoryReminderStore
from stepwise_local.in_memory.tasks import InMemoryTaskRepository

NOW = datetime(2026, 11, 27, 12, 0, tzinfo=UTC)
OWNER, OTHER = 7, 8
TOKEN = "123:test"
MCP = "https://notes.example/mcp"
AUTH = "https://auth.example"
CALLBACK = "https://stepwise.example/oauth/callback"
NOTES = ServerEntry(name="notes", url=MCP, auth="oauth")
BROKEN = ServerEntry(name="broken", url="https://broken.example/mcp", auth="oauth")


class Routes:
    """urllib3's pool for the flow: the scripted OAuth server's answers by method and URL; 404 elsewhere."""

    def __init__(self) -> None:
        self.requests: list[SentRequest] = []
        self.table: dict[tuple[str, str], Any] = {
            ("POST", MCP): (
                401,
                {},
                {"WWW-Authenticate": 'Bearer resource_metadata="https://notes.example/meta"'},
            ),
            ("GET", "https://notes.example/meta"): (200, {"resource": MCP, "authorization_servers": [AUTH]}),
            ("GET", f"{AUTH}/.well-known/oauth-authorization-server"): (
                200,
                {
                    "issuer": AUTH,
                    "authorization_endpoint": f"{AUTH}/authorize",
                    "token_endpoint": f"{AUTH}/token",
                    "registration_endpoint": f"{AUTH}/register",
                    "revocation_endpoint": f"{AUTH}/revoke",
                    "response_types_supported": ["code"],
                    "code_challenge_methods_supported": ["S256"],
                },
            ),
            ("POST", f"{AUTH}/register"): (201, {"client_id": "client-1", "client_secret": "secret-1"}),
            ("POST", f"{AUTH}/revoke"): (200, b""),
        }

    def urlopen(self, method: str, url: str, redirect: bool = True, **kw: Any) -> Any:
        self.requests.append(SentRequest(method, url, kw["headers"], kw.get("body"), kw["timeout"], {}))
        parts = urlsplit(url)
        answer = self.table.get((method, f"{parts.scheme}://{parts.netloc}{parts.path}"), (404, {}))
        return canned(answer).response(method, url, kw.get("preload_content", True))

    def to(self, url: str) -> list[SentRequest]:
        return [r for r in self.requests if r.url.split("?")[0] == url]


def app_with_accounts(
    entries: tuple[ServerEntry, ...] = (NOTES, BROKEN),
) -> tuple[AppServices, InMemoryAccountStore, Routes]:
    tasks = InMemoryTaskRepository()
    store, routes = InMemoryAccountStore(), Routes()
    flow = AccountFlow(
        store,
        HttpTransport(routes),
        lambda: entries,
        lambda name: "",
        marks=InMemoryReminderStore(),
        now=lambda: NOW.timestamp(),
    )
    access = AccountsAccess(
        store=lambda: store, flow=lambda: flow, servers=lambda: entries, callback_url=CALLBACK
    )
    app = AppServices(
        bot_token=lambda: TOKEN,
        count=lambda key, window, limit: True,
        limits=AppLimits(allowed_users=frozenset({OWNER, OTHER})),
        tools=lambda: build_registry(tasks=tasks, ledger=tasks.ledger),
        audit=InMemoryAuditLog(),
        approvals=InMemoryApprovalStore(),
        presses=lambda: None,  # type: ignore[arg-type,return-value]
        chats=InMemoryChatStore(),
        connections=None,
        jobs=None,
        usage=None,
        timezone=lambda user: "Europe/Lisbon",
        default_timezone="UTC",
        voice_replies=False,
        daily_token_budget=0,
        approval_timeout_seconds=3600,
        clock=lambda: NOW,
        accounts=access,
    )
    return app, store, routes


def connect(store: InMemoryAccountStore, user: int, server: str = "notes") -> None:
    store.put(Account(user, server, "access-x", "refresh-x", None, None, "2026-11-20T09:30:00Z"))


def state(app: AppServices, user: int = OWNER) -> dict[str, Any]:
    fields = {"user": json.dumps({"id": user, "first_name": "Ada"}), "auth_date": str(int(NOW.timestamp()))}
    data = urlencode({**fields, "hash": sign(fields, TOKEN)})
    answer = serve(
        "GET", "/app/api/state", {"authorization": "tma " + data}, "", Page("<html></html>", {}), lambda: app
    )
    assert answer["statusCode"] == 200, answer
    shown: dict[str, Any] = json.loads(str(answer["body"]))
    return shown


def tap(
    app: AppServices, action: str, target: Any, user: int = OWNER, request_id: str = "tap-00001"
) -> tuple[int, Any]:
    body = json.dumps({"action": action, "target": target, "request_id": request_id})
    answer = act(WebAppUser(user, "Ada", int(NOW.timestamp())), body, app)
    return answer.status, answer.body


def test_the_state_lists_each_server_connected_since_when_or_not_and_starts_no_sign_in() -> None:
    app, store, routes = app_with_accounts()
    connect(store, OWNER)
    connect(store, OTHER, "broken")
    assert state(app)["accounts"] == [
        {"name": "notes", "connected": True, "since": "Fri 20 Nov 2026 at 09:30"},  # in the person's zone
        {"name": "broken", "connected": False, "since": None},
    ]
    assert store.sign_ins == {} and routes.requests == []


def test_connect_starts_a_sign_in_and_answers_its_url_to_open_without_keeping_the_url_anywhere() -> None:
    app, store, _routes = app_with_accounts()
    status, body = tap(app, "account_connect", "Notes")
    assert status == 200 and body["done"].startswith("Opening notes's sign-in page")
    url = urlsplit(body["url"])
    query = dict(parse_qsl(url.query))
    assert f"{url.scheme}://{url.netloc}{url.path}" == f"{AUTH}/authorize"
    assert (
        query["redirect_uri"] == CALLBACK
        and query["resource"] == MCP
        and query["code_challenge_method"] == "S256"
    )
    (pending,) = store.sign_ins.values()
    assert (pending.user_id, pending.server, pending.state) == (OWNER, "notes", query["state"])
    (audited,) = app.audit.entries(OWNER)
    assert audited.tool == "connect_account" and query["state"] not in repr(audited)


def test_a_server_that_cannot_be_signed_in_to_says_why_and_keeps_nothing() -> None:
    app, store, _routes = app_with_accounts()
    status, body = tap(app, "account_connect", "broken")
    assert status == 502 and body["error"].startswith("broken: can't connect (")
    assert store.sign_ins == {}


def test_disconnect_revokes_and_forgets_the_persons_account_only() -> None:
    app, store, routes = app_with_accounts()
    assert tap(app, "account_connect", "notes", request_id="tap-00000")[0] == 200  # registers the client
    connect(store, OWNER)
    connect(store, OTHER)
    assert tap(app, "account_disconnect", "notes") == (200, {"done": "Disconnected notes."})
    assert store.get(OWNER, "notes") is None and store.get(OTHER, "notes") is not None
    assert len(routes.to(f"{AUTH}/revoke")) == 2  # the refresh token, then the access token
    assert tap(app, "account_disconnect", "notes", request_id="tap-00002") == (
        404,
        {"error": "You have not connected notes."},
    )


def test_unknown_servers_malformed_targets_and_a_deployment_without_accounts() -> None:
    app, store, _routes = app_with_accounts()
    assert tap(app, "account_connect", "calendar") == (
        404,
        {"error": "There is no server “calendar” to connect."},
    )
    assert tap(app, "account_disconnect", 3)[0] == 400
    assert store.sign_ins == {}
    bare = replace(app, accounts=None)
    assert state(bare)["accounts"] is None
    assert tap(bare, "account_connect", "notes")[0] == 404
