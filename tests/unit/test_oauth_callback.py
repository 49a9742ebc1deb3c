"""The sign-in callback's core (`stepwise.accounts.callback`), without sockets: a real AccountFlow on the
in-memory store, its HTTP answered by a canned OAuth server, and the in-memory Bot API. The page and the
person's line for a connection and for each way a callback keeps nothing; no code in any log line."""

from __future__ import annotations

import logging
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

import pytest
from support.oauth_routes import Routes

from stepwise.accounts.callback import CallbackServices, finish_callback
from stepwise.accounts.flow import AccountFlow, SignInFailed
from stepwise.aws.http_transport import HttpTransport
from stepwise.remote_tools.config import ServerEntry
from stepwise_local.in_memory.accounts import InMemoryAccountStore
from stepwise_local.in_memory.reminders import InMemoryReminderStore
from stepwise_local.in_memory.telegram import InMemoryTelegram

CALLBACK = "https://api.example/oauth/callback"
NOTES = ServerEntry(name="notes", url="https://notes.example/mcp", auth="oauth")
CODE = "the-code-nobody-may-log"


class Setup:
    def __init__(self) -> None:
        self.routes = Routes("notes.example")
        self.store = InMemoryAccountStore()
        self.profiles = InMemoryReminderStore()
        self.now = 1.8e9
        self.flow = AccountFlow(
            self.store,
            HttpTransport(self.routes),
            lambda: (NOTES,),
            lambda name: "",
            marks=self.profiles,
            now=lambda: self.now,
        )
        self.telegram = InMemoryTelegram()

    def services(self) -> CallbackServices:
        return CallbackServices(flow=lambda: self.flow, telegram=lambda: self.telegram)

    def state(self, user: int = 7) -> str:
        url = self.flow.start_sign_in(user, NOTES, CALLBACK).url
        return dict(parse_qsl(urlsplit(url).query))["state"]

    def call(self, **query: str) -> Any:
        return finish_callback(urlencode(query), self.services)


@pytest.fixture
def setup() -> Setup:
    return Setup()


def test_a_callback_with_the_code_keeps_the_account_answers_200_and_tells_the_person(
    setup: Setup, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    page = setup.call(state=setup.state(), code=CODE)
    assert page.status == 200
    assert "<p>Connected notes. You can close this page.</p>" in page.html
    response = page.response()
    assert response["statusCode"] == 200 and response["body"] == page.html
    assert response["headers"]["Content-Type"] == "text/html; charset=utf-8"
    assert response["headers"]["Referrer-Policy"] == "no-referrer"
    assert setup.telegram.texts(7) == ["Connected notes."]
    account = setup.store.get(7, "notes")
    assert account is not None and account.access_token == "access-1"
    (exchange,) = setup.routes.forms("/token")
    assert exchange["code"] == CODE and exchange["grant_type"] == "authorization_code"
    assert CODE not in caplog.text


def test_a_used_or_unknown_state_gets_the_400_page_and_tells_nobody(setup: Setup) -> None:
    state = setup.state()
    assert setup.call(state=state, code=CODE).status == 200
    again = setup.call(state=state, code=CODE)
    forged = setup.call(state="made-up-elsewhere", code=CODE)
    missing = setup.call(code=CODE)
    for page in (again, forged, missing):
        assert page.status == 400
        assert "<p>Not connected. This sign-in link is unknown or was used already.</p>" in page.html
    assert setup.telegram.texts(7) == ["Connected notes."], "only the first callback told the person"
    assert len(setup.routes.forms("/token")) == 1


@pytest.mark.parametrize(
    ("query", "reason"),
    [
        ({"error": "access_denied"}, "notes did not sign you in (access_denied)."),
        ({"error": "<script>alert(1)</script>"}, "notes did not sign you in (an error)."),
        ({}, "notes sent no authorization code back."),
        ({"code": ""}, "notes sent no authorization code back."),
    ],
)
def test_an_error_or_no_code_keeps_nothing_answers_400_and_tells_the_person(
    setup: Setup, query: dict[str, str], reason: str
) -> None:
    page = setup.call(state=setup.state(), **query)
    assert page.status == 400
    assert f"<p>Not connected. {reason}</p>" in page.html
    assert "<script>" not in page.html.split("</style>")[1]
    assert setup.telegram.texts(7) == [f"Not connected: {reason} /accounts shows your accounts."]
    assert setup.store.accounts == {} and setup.store.sign_ins == {}
    assert setup.routes.forms("/token") == []


def test_a_late_callback_is_refused_and_its_person_told(setup: Setup) -> None:
    state = setup.state(user=9)
    setup.now += 11 * 60
    page = setup.call(state=state, code=CODE)
    assert page.status == 400 and "The sign-in to notes expired: start it again." in page.html
    assert setup.telegram.texts(9) == [
        "Not connected: The sign-in to notes expired: start it again. /accounts shows your accounts."
    ]
    assert setup.store.accounts == {}


def test_a_refused_exchange_keeps_nothing_and_never_shows_or_logs_the_code(
    setup: Setup, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    setup.routes.table[("POST", "https://notes.example/token")] = (400, {"error": "invalid_grant"})
    page = setup.call(state=setup.state(), code=CODE)
    assert page.status == 400
    assert "notes gave no tokens (it answered 400 invalid_grant)." in page.html
    assert CODE not in page.html and CODE not in caplog.text
    assert setup.store.accounts == {}
    assert "Not connected: notes gave no tokens" in setup.telegram.texts(7)[0]


def test_the_page_is_answered_when_telling_the_person_fails(setup: Setup) -> None:
    setup.telegram.fail_next("send_message", ConnectionError("down"))
    page = setup.call(state=setup.state(), code=CODE)
    assert page.status == 200 and setup.store.get(7, "notes") is not None


class FailingFlow:
    def __init__(self, answer: Any) -> None:
        self.answer = answer

    def finish_sign_in(self, state: str | None, code: str | None, error: str | None) -> Any:
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer


def test_what_the_page_shows_is_escaped_and_an_unexpected_failure_is_a_500_page(
    caplog: pytest.LogCaptureFixture,
) -> None:
    telegram = InMemoryTelegram()

    def services(flow: Any) -> CallbackServices:
        return CallbackServices(flow=lambda: flow, telegram=lambda: telegram)

    failed = SignInFailed("refused", "<b>x</b> & co", 7, "notes")
    page = finish_callback("state=s", lambda: services(FailingFlow(failed)))
    assert "<p>Not connected. &lt;b&gt;x&lt;/b&gt; &amp; co</p>" in page.html

    broken = finish_callback(f"state=s&code={CODE}", lambda: services(FailingFlow(RuntimeError(CODE))))
    assert broken.status == 500 and "nothing was kept" in broken.html
    assert CODE not in caplog.text and "RuntimeError" in caplog.text
