"""Playing the person in the browser at the example notes server's sign-in page, with `requests`.

`sign_in(url, name)` opens an authorization URL (or a link that redirects to one), follows the redirects to
the sign-in page, fills its form with `name` and presses Sign in; `decline(url)` presses Cancel. Both return
where the browser would go next: the client's redirect URI with the authorization response (`code` and
`state`, or `error` and `state`), which they never open, so the caller (a test, the SDK's `callback_handler`)
decides when the callback runs. A redirect that already carries an authorization response (the server refused
the request) is returned the same way, without a page.
"""

from __future__ import annotations

from html.parser import HTMLParser
from typing import NamedTuple
from urllib.parse import parse_qs, urljoin, urlsplit

import requests

MOST_REDIRECTS = 10
REDIRECTS = (301, 302, 303, 307, 308)


class SignInFailed(Exception):
    """The sign-in did not end in a redirect to the client: what the browser showed instead."""


class SignInForm(NamedTuple):
    action: str
    fields: dict[str, str]  # the hidden fields
    text_fields: dict[str, str]  # the fields a person types into: name -> id
    labels: dict[str, str]  # each labelled control's id -> its label's text


def sign_in(url: str, name: str, session: requests.Session | None = None) -> str:
    """Sign in as `name` from `url`; the redirect to the client that follows (not opened)."""
    return _answer(url, {"name": name, "decision": "allow"}, session)


def decline(url: str, session: requests.Session | None = None) -> str:
    """Press Cancel on the sign-in page reached from `url`; the redirect to the client (not opened)."""
    return _answer(url, {"decision": "deny"}, session)


def is_authorization_response(url: str) -> bool:
    """Whether `url` carries an OAuth authorization response: a `state` with a `code` or an `error`."""
    query = parse_qs(urlsplit(url).query)
    return "state" in query and ("code" in query or "error" in query)


def _answer(url: str, answer: dict[str, str], session: requests.Session | None) -> str:
    browser = session or requests.Session()
    for _ in range(MOST_REDIRECTS):
        response = browser.get(url, allow_redirects=False, timeout=30)
        if response.status_code in REDIRECTS:
            url = urljoin(url, response.headers["location"])
            if is_authorization_response(url):
                return url
            continue
        if response.status_code != 200:
            raise SignInFailed(f"{url} answered {response.status_code}: {response.text[:500]}")
        form = read_form(response.text)
        if not form.labels.get(form.text_fields.get("name", "")):
            raise SignInFailed(f"{url} shows no labelled name field: {response.text[:500]}")
        posted = browser.post(
            urljoin(url, form.action), data={**form.fields, **answer}, allow_redirects=False, timeout=30
        )
        if posted.status_code not in REDIRECTS:
            raise SignInFailed(f"signing in answered {posted.status_code}: {posted.text[:500]}")
        return urljoin(url, posted.headers["location"])
    raise SignInFailed(f"more than {MOST_REDIRECTS} redirects from {url}")


def read_form(page: str) -> SignInForm:
    """The first form of an HTML page: its action, hidden fields, text fields and labels."""
    parser = _FormParser()
    parser.feed(page)
    return SignInForm(parser.action or "", parser.hidden, parser.text_fields, parser.labels)


class _FormParser(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.action: str | None = None
        self.hidden: dict[str, str] = {}
        self.text_fields: dict[str, str] = {}
        self.labels: dict[str, str] = {}
        self._in_form = False
        self._label_for: str | None = None
        self._forms_seen = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = {k: v or "" for k, v in attrs}
        if tag == "form":
            self._forms_seen += 1
            self._in_form = self._forms_seen == 1
            if self._in_form:
                self.action = attributes.get("action", "")
        elif tag == "label":
            self._label_for = attributes.get("for")
            if self._label_for:
                self.labels[self._label_for] = ""
        elif tag == "input" and self._in_form and attributes.get("name"):
            kind = attributes.get("type", "text").lower()
            if kind == "hidden":
                self.hidden[attributes["name"]] = attributes.get("value", "")
            elif kind == "text":
                self.text_fields[attributes["name"]] = attributes.get("id", "")

    def handle_endtag(self, tag: str) -> None:
        if tag == "form":
            self._in_form = False
        elif tag == "label":
            self._label_for = None

    def handle_data(self, data: str) -> None:
        if self._label_for:
            self.labels[self._label_for] += data
