"""The Mini App in a real headless browser: Debian's Chromium driven by Playwright, the page served by the
emulated stack, and a stand-in for Telegram's `telegram-web-app.js` that gives the page correctly signed
initData (as Telegram's does inside the app) and answers `showConfirm`. Through the real state machine: the
page shows what chat turns made, its Delete and Forget show in /tasks and /memory, an approval answered on
the page resumes its turn once, and the page loads without a JavaScript error, light and dark. The tests
take the screenshots docs/app.md shows.

Skipped, with the reason, when no Chromium is found (STEPWISE_CHROMIUM, or `chromium` on the PATH), unless
STEPWISE_REQUIRE_BROWSER is set (CI sets it): then a missing browser fails them.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pytest
import requests
from support.miniapp import init_data
from support.stack import Stack
from support.tools import ROOT

from stepwise.telegram.conversation import Conversation
from stepwise_local import updates
from stepwise_local.anthropic_server import text, tool_use
from stepwise_local.mcp_http import LocalMcpEndpoint

if TYPE_CHECKING:
    from pathlib import Path

    from playwright.sync_api import Browser, Page

try:
    from playwright.sync_api import expect
except ImportError:  # without Playwright the tests are skipped below
    expect = None  # type: ignore[assignment]

CHROMIUM = os.environ.get("STEPWISE_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
REQUIRED = bool(os.environ.get("STEPWISE_REQUIRE_BROWSER"))
pytestmark = [
    pytest.mark.skipif(
        CHROMIUM is None and not REQUIRED,
        reason="no Chromium found (apt-get install chromium): the Mini App's browser tests",
    ),
    pytest.mark.skipif(
        expect is None and not REQUIRED, reason="Playwright is not installed (requirements-dev.txt)"
    ),
]
FLAGS = [
    "--no-sandbox",
    "--disable-background-networking",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-component-update",
    "--disable-sync",
]
TELEGRAM_SCRIPT = "https://telegram.org/js/telegram-web-app.js"
# The screenshots docs/app.md shows are written there only when asked (STEPWISE_SCREENSHOTS=docs/images):
# otherwise a test run would leave the checkout changed (the times and figures in them differ each run).
SCREENSHOTS_TO = os.environ.get("STEPWISE_SCREENSHOTS", "")
PHONE = {"width": 390, "height": 844}  # a phone's width, in CSS pixels
THEMES = {
    "light": {"bg_color": "#ffffff", "text_color": "#000000", "hint_color": "#999999",
              "link_color": "#2481cc", "button_color": "#2481cc", "button_text_color": "#ffffff",
              "secondary_bg_color": "#efeff3", "destructive_text_color": "#e53935"},
    "dark": {"bg_color": "#17212b", "text_color": "#f5f5f5", "hint_color": "#708499",
             "link_color": "#6ab3f3", "button_color": "#5288c1", "button_text_color": "#ffffff",
             "secondary_bg_color": "#232e3c", "destructive_text_color": "#ec3942"},
}  # fmt: skip


def stand_in(data: str, scheme: str = "light") -> str:
    """A `telegram-web-app.js` for the tests: the signed initData, the theme as Telegram sets it (the
    `--tg-theme-*-color` variables), and `showConfirm`, answered yes and recorded."""
    theme = THEMES[scheme]
    return f"""
    (function () {{
      const theme = {json.dumps(theme)};
      for (const [key, value] of Object.entries(theme))
        document.documentElement.style.setProperty("--tg-theme-" + key.replaceAll("_", "-"), value);
      window.__confirms = [];
      window.__links = [];
      window.__ready = false;
      window.Telegram = {{ WebApp: {{
        initData: {json.dumps(data)},
        colorScheme: {json.dumps(scheme)},
        themeParams: theme,
        version: "9.0",
        ready() {{ window.__ready = true; }},
        expand() {{}},
        showConfirm(message, callback) {{
          window.__confirms.push(message);
          setTimeout(() => callback(true), 0);
        }},
        openLink(url) {{ window.__links.push(url); }},
        HapticFeedback: {{ notificationOccurred() {{}} }},
      }} }};
    }})();
    """


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    assert CHROMIUM is not None, "STEPWISE_REQUIRE_BROWSER is set, and no Chromium was found"
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS, headless=True)
        yield launched
        launched.close()


@pytest.fixture
def app_url(stack: Stack) -> Iterator[str]:
    with LocalMcpEndpoint(stack.emulation) as served:
        yield served.app_url


class Opened:
    """A page opened as Telegram would open it, with what it logged."""

    def __init__(self, page: Page) -> None:
        self.page = page
        self.errors: list[str] = []
        self.requests: list[str] = []
        page.on("pageerror", lambda error: self.errors.append(str(error)))
        page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        page.on("request", lambda r: self.requests.append(r.url))

    def status(self) -> str:
        return str(self.page.locator("#status").text_content())


def open_app(browser: Browser, app_url: str, data: str, scheme: str = "light") -> Opened:
    """The page as Telegram opens it (its strict CSP in force: the tests wait with locators, not eval)."""
    context = browser.new_context(viewport=PHONE, color_scheme=scheme, device_scale_factor=1)  # type: ignore[arg-type]
    page = context.new_page()
    opened = Opened(page)
    script = stand_in(data, scheme)
    page.route(TELEGRAM_SCRIPT, lambda route: route.fulfill(body=script, content_type="text/javascript"))
    page.goto(app_url)
    expect(page.locator("#app")).to_have_attribute("aria-busy", "false")
    return opened


def add_by_chat(stack: Stack, user: int, title: str, due: str | None = None) -> None:
    arguments: dict[str, Any] = {"title": title, **({"due": due} if due else {})}
    stack.anthropic.script(tool_use(("add_task", arguments)), text(f"Added {title}."))
    assert stack.say(user, f"add {title}")["status"] == "SUCCEEDED"


def shoot(page: Page, name: str, tmp_path: Path, *, for_docs: bool = True) -> None:
    """A full-page screenshot: one docs/app.md shows into STEPWISE_SCREENSHOTS (a folder, relative to the
    project) when it is set, else (and every other one) beside the test's other temporary files; either way
    the picture is checked to be a PNG."""
    folder = ROOT / SCREENSHOTS_TO if SCREENSHOTS_TO and for_docs else tmp_path
    folder.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(folder / name), full_page=True)
    assert (folder / name).read_bytes().startswith(b"\x89PNG")


def test_the_page_shows_what_chat_turns_made_and_delete_and_forget_show_in_the_chat(
    stack: Stack, app_url: str, browser: Browser, tmp_path: Path
) -> None:
    user = stack.new_user()
    add_by_chat(stack, user, "buy milk", "2026-12-01")
    add_by_chat(stack, user, "old plan")
    stack.anthropic.script(tool_use(("remember", {"fact": "The user takes coffee black"})), text("Noted."))
    stack.say(user, "remember I take my coffee black")
    stack.anthropic.script(
        tool_use(("set_reminder", {"text": "call mom", "in_minutes": 90})), text("I'll remind you.")
    )
    stack.say(user, "remind me to call mom in 90 minutes")
    checkin = {"text": "send me my open tasks", "checkin": True, "repeat": {"days": [], "time": "08:00"}}
    stack.anthropic.script(tool_use(("set_reminder", checkin)), text("Every morning."))
    name = stack.send(user, "every morning at 8 send me my open tasks")
    stack.press(user, stack.buttons(user), "Approve")  # a check-in waits for the tap (docs/security.md)
    assert stack.emulation.wait(name)["status"] == "SUCCEEDED"
    stack.say(user, "/connect laptop")

    opened = open_app(browser, app_url, init_data(user))
    page = opened.page
    assert opened.errors == [], "no JavaScript error on load"
    assert page.evaluate("window.__ready") is True, "the page called Telegram.WebApp.ready()"
    assert opened.status() == "Hello, Ada."
    tasks = page.locator("#tasks li")
    assert tasks.all_inner_texts()[0].startswith("#1 buy milk\ndue Tue 01 Dec 2026")
    reminders = page.locator("#reminders li").all_inner_texts()
    assert reminders[0].startswith("call mom\non ") and "next" not in reminders[0]
    assert reminders[1].startswith("Check-in: send me my open tasks\nevery day at 08:00 (UTC) · next ")
    assert re.search(r"· next \w{3} \d\d \w{3} 20\d\d at 08:00\n", reminders[1] + "\n"), reminders[1]
    assert page.locator("#times").text_content() == "Times are in UTC."
    on_screen = str(page.locator("#sections").inner_text())
    assert not re.search(r"fact-|summary-|\d{4}-\d\d-\d\dT", on_screen), "no internal id, no raw ISO time"
    assert "The user takes coffee black" in str(page.locator("#memories").text_content())
    assert "laptop" in str(page.locator("#connections").text_content())
    assert page.locator("svg.chart rect.bar").count() == 30
    assert page.locator("svg.chart text.tokens-axis").all_text_contents()[0] == "0", "an axis with values"
    assert len(page.locator("svg.chart text.cost-axis").all_text_contents()) == 3
    assert len(page.locator("svg.chart text.day").all_text_contents()) == 5, "a day label a week apart"
    assert page.locator("#usage-empty").count() == 0
    api_calls = [url for url in opened.requests if "/app/api/" in url]
    assert api_calls == [app_url + "/api/state"], "the page's data in one request"
    shoot(page, "app-light.png", tmp_path)

    page.get_by_role("button", name="Delete task #2 old plan").click()
    # the result shows where the task was: a line in its place in the list, not at the top of the page
    expect(page.locator("#tasks li.gone .result.ok")).to_have_text("Deleted task #2: old plan")
    assert page.evaluate("window.__confirms") == ["Delete task #2 old plan?"]
    assert opened.status() == "Hello, Ada."
    assert page.get_by_role("button", name="Delete task #2 old plan").count() == 0
    assert page.locator("#tasks li").all_inner_texts()[1] == "Deleted task #2: old plan"
    page.get_by_role("button", name="Forget: The user takes coffee black").click()
    expect(page.locator("#memories .result.ok")).to_contain_text("Forgot")
    page.get_by_role("button", name="Done: task #1 buy milk").click()
    expect(page.locator("#tasks .result.ok")).to_have_text("Completed task #1: buy milk")
    assert "No open tasks." in str(page.locator("#tasks").text_content())
    shoot(page, "app-after-taps.png", tmp_path, for_docs=False)
    assert opened.errors == []

    stack.say(user, "/tasks")
    listed = stack.replies(user)[-1]
    assert "old plan" not in listed and "buy milk" in listed
    stack.say(user, "/memory")
    assert "coffee" not in stack.replies(user)[-1]


def test_an_approval_answered_on_the_page_resumes_its_turn_once(
    stack: Stack, app_url: str, browser: Browser, tmp_path: Path
) -> None:
    user = stack.new_user()
    add_by_chat(stack, user, "old plan")
    stack.anthropic.script(tool_use(("delete_task", {"task_id": 1})), text("Deleted the old plan."))
    stack.send(user, "delete the old plan")
    buttons = stack.buttons(user)
    time.sleep(0.2)  # the request is shown: its task token is stored before the message is sent

    opened = open_app(browser, app_url, init_data(user), "dark")
    page = opened.page
    asks = "The assistant in your private chat asks to delete task #1"
    approve = page.get_by_role("button", name=f"Approve: {asks}")
    assert approve.count() == 1, page.content()
    shoot(page, "app-dark.png", tmp_path)
    approve.click()
    expect(page.locator("#approvals .result.ok")).to_have_text("Approved ✅")
    assert page.evaluate("window.__confirms")[0].startswith(f"Approve? {asks}")
    stack.emulation.wait_idle(user)
    assert stack.tasks(user) == []
    assert stack.replies(user)[-1] == "Deleted the old plan."
    prompt = next(m for m in stack.telegram.messages(user) if m["message_id"] == buttons["message_id"])
    assert "✅ Approved" in stack.telegram.text_of(prompt)
    assert "Nothing is waiting." in str(page.locator("#approvals").text_content())

    stack.press(user, buttons, "Approve")  # the chat's old button: already decided, nothing runs again
    stack.emulation.wait_idle(user)
    runs = [
        e
        for e in stack.emulation.table("AuditTable").query(
            KeyConditionExpression="user_id = :u", ExpressionAttributeValues={":u": user}
        )["Items"]
        if e["tool"] == "delete_task" and e["outcome"] == "ok"
    ]
    assert len(runs) == 1
    assert opened.errors == []


@pytest.mark.parametrize("replay", ["none", "forged", "stale", "another user"])
def test_the_pages_requests_replayed_without_valid_initData_get_nothing(
    stack: Stack, app_url: str, browser: Browser, replay: str
) -> None:
    owner, other = stack.new_user(), stack.new_user()
    add_by_chat(stack, owner, "owner's secret")
    opened = open_app(browser, app_url, init_data(owner))
    page = opened.page
    seen: dict[str, Any] = {}
    page.on("request", lambda r: seen.setdefault("state", r) if r.url.endswith("/api/state") else None)
    page.reload()
    expect(page.locator("#app")).to_have_attribute("aria-busy", "false")
    original = seen["state"].headers["authorization"]
    good = original.removeprefix("tma ")
    forged = good[: good.index("hash=") + 5] + "0" * 64
    headers = {
        "none": {},
        "forged": {"Authorization": f"tma {forged}"},
        "stale": {"Authorization": f"tma {init_data(owner, auth_date=int(time.time()) - 3700)}"},
        "another user": {"Authorization": f"tma {init_data(other)}"},
    }[replay]
    replayed = page.request.get(app_url + "/api/state", headers=headers)
    body = replayed.text()
    if replay == "another user":
        assert replayed.status == 200 and json.loads(body)["tasks"] == []
    else:
        assert replayed.status == 401 and json.loads(body) == {"error": "unauthorized"}
    assert "secret" not in body
    deleted = page.request.post(
        app_url + "/api/action",
        headers={**headers, "Content-Type": "application/json"},
        data=json.dumps({"action": "task_delete", "target": 1, "request_id": f"replay-{replay[:5]}-01"}),
    )
    assert deleted.status in (401, 404) and "secret" not in deleted.text()
    assert [t["title"] for t in stack.tasks(owner)] == ["owner's secret"]


def test_opened_outside_telegram_the_page_says_how_to_open_it(
    stack: Stack, app_url: str, browser: Browser
) -> None:
    opened = open_app(browser, app_url, "")  # a reply keyboard's button, or a plain browser: no initData
    assert opened.errors == []
    assert opened.status().startswith("Open this page from the bot's menu button")
    assert [url for url in opened.requests if "/app/api/" in url] == []


def test_make_chats_app_button_prints_a_link_a_browser_opens_signed_in_with_nothing_off_the_machine(
    browser: Browser, tmp_path: Path
) -> None:
    """`make chat` as a person runs it: /app, then its button, prints a link; opened in a plain browser (no
    Telegram, nothing routed by the test) the page is signed in as the local user and shows their tasks, and
    every request it makes stays on 127.0.0.1 (the stand-in for Telegram's script included)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "AWS_", "STEPWISE_"))}
    env |= {
        "PYTHONPATH": os.pathsep.join([str(ROOT / "layers" / "core"), str(ROOT)]),
        "STEPWISE_MCP_PORT": "0",
    }
    command = [sys.executable, "-m", "stepwise_local.chat", "--log", str(tmp_path / "chat.log")]
    pipes = {"stdin": subprocess.PIPE, "stdout": subprocess.PIPE, "stderr": subprocess.DEVNULL}
    with subprocess.Popen(command, **pipes, text=True, cwd=ROOT, env=env) as chat:
        assert chat.stdin is not None and chat.stdout is not None
        chat.stdin.write("add buy milk\n/app\n1\n")
        chat.stdin.flush()
        shown = []
        while not (shown and shown[-1].startswith("(“Open Stepwise” opens the Mini App")):
            line = chat.stdout.readline()
            assert line, f"the chat ended before printing the link: {shown}"
            shown.append(line.rstrip("\n"))
        link = shown[-1].rsplit(" ", 1)[1]
        origin = re.match(r"http://127\.0\.0\.1:\d+", link)
        assert origin is not None and link.startswith(origin.group() + "/app#tgWebAppData="), link

        context = browser.new_context(viewport=PHONE, device_scale_factor=1)
        off_the_machine: list[str] = []
        requests: list[str] = []

        def only_local(route: Any) -> None:
            url = route.request.url
            requests.append(url)
            if url.startswith(origin.group() + "/"):
                route.continue_()
            else:
                off_the_machine.append(url)
                route.abort()

        context.route("**/*", only_local)
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.goto(link)
        expect(page.locator("#app")).to_have_attribute("aria-busy", "false")
        assert page.locator("#status").text_content() == "Hello, Local."
        assert page.locator("#tasks li").all_inner_texts()[0].startswith("#1 buy milk")
        shoot(page, "app-from-make-chat.png", tmp_path)
        context.close()
        chat.stdin.close()
        assert chat.wait(timeout=60) == 0
    assert off_the_machine == [] and errors == []
    assert origin.group() + "/js/telegram-web-app.js" in requests, "the stand-in for Telegram's script"
    assert [url for url in requests if "/app/api/" in url] == [origin.group() + "/app/api/state"]


def test_a_bad_time_zone_is_refused_next_to_the_field_with_the_reason(
    stack: Stack, app_url: str, browser: Browser, tmp_path: Path
) -> None:
    user = stack.new_user()
    opened = open_app(browser, app_url, init_data(user))
    page = opened.page
    zone = page.get_by_role("textbox", name="Time zone")
    zone.fill("Mars/Olympus")
    page.get_by_role("button", name="Set time zone").click()
    reason = "'Mars/Olympus' is not a time zone I know; use an IANA name such as Europe/Lisbon."
    note = page.locator("#settings .result.error")
    expect(note).to_have_text(reason)
    assert note.get_attribute("role") == "alert"
    expect(zone).to_have_value("Mars/Olympus")  # what was typed stays, marked, described by the reason
    assert zone.get_attribute("aria-invalid") == "true"
    assert zone.get_attribute("aria-describedby") == note.get_attribute("id")
    assert opened.status() == "Hello, Ada.", "not at the top of the page"
    shoot(page, "app-bad-zone.png", tmp_path)
    zone.fill("America/New_York")
    page.get_by_role("button", name="Set time zone").click()
    expect(page.locator("#settings .result.ok")).to_contain_text("Time zone set to America/New_York")
    expect(page.locator("#times")).to_have_text("Times are in America/New_York.")
    # the browser logs the refused request itself; the page's script raised nothing
    refused = "Failed to load resource: the server responded with a status of 400 (Bad Request)"
    assert opened.errors == [refused]


def test_no_usage_yet_is_said_in_words_not_an_empty_chart(
    stack: Stack, app_url: str, browser: Browser, tmp_path: Path
) -> None:
    opened = open_app(browser, app_url, init_data(stack.new_user()))
    page = opened.page
    expect(page.locator("#usage-empty")).to_contain_text("No usage yet in the last 30 days")
    assert page.locator("#usage svg.chart").count() == 0 and page.locator("#usage dl.totals").count() == 0
    shoot(page, "app-empty.png", tmp_path, for_docs=False)
    assert opened.errors == []


def test_a_groups_approval_on_the_page_names_the_group(
    stack: Stack, app_url: str, browser: Browser, tmp_path: Path
) -> None:
    from stepwise_local import updates

    ana, group = stack.new_user(), -1_009_200_000_001
    stack.anthropic.script(tool_use(("add_task", {"title": "bread"})), text("Added."))
    stack.anthropic.script(tool_use(("delete_task", {"task_id": 1})), text("Deleted the bread."))
    for words in ("@stepwise_bot add bread", "@stepwise_bot delete the bread task"):
        update = updates.group_message(ana, words, chat_id=group, first_name="Ana")
        update["message"]["chat"]["title"] = "Family"
        assert stack.emulation.post_update(update)["statusCode"] == 200
        stack.emulation.wait_until_taken(group, update["update_id"])
    stack.buttons(group)
    time.sleep(0.2)  # the request is shown: its task token is stored before the message is sent
    opened = open_app(browser, app_url, init_data(ana))
    page = opened.page
    row = page.locator("#approvals li")
    expect(row).to_contain_text("The assistant in the group “Family” asks to delete task #1 “bread”.")
    approve = page.get_by_role("button", name="Approve: The assistant in the group “Family” asks")
    assert approve.count() == 1
    shoot(page, "app-group-approval.png", tmp_path, for_docs=False)
    approve.click()
    expect(page.locator("#approvals .result.ok")).to_have_text("Approved ✅")
    stack.emulation.wait_idle(group)
    assert stack.tasks(group) == []
    assert opened.errors == []


def test_your_accounts_connect_opens_the_sign_in_and_disconnect_asks_first(
    stack: Stack, browser: Browser, tmp_path: Path
) -> None:
    from stepwise_local.example_notes.browser import sign_in
    from stepwise_local.example_notes.server import ExampleNotesServer

    emulation = stack.emulation
    user = stack.new_user()
    with (
        ExampleNotesServer(clock=lambda: emulation.now().timestamp()) as notes,
        LocalMcpEndpoint(emulation) as served,
    ):
        servers = [{"name": "notes", "url": notes.mcp_url, "auth": "oauth"}]
        emulation.put_parameter("/stepwise/mcp/browser-accounts", json.dumps(servers))
        emulation.config.env["MCP_SERVERS_PARAMETER"] = "/stepwise/mcp/browser-accounts"
        opened = open_app(browser, served.app_url, init_data(user))
        page = opened.page
        accounts = page.locator("#accounts")
        expect(accounts).to_contain_text("not connected")
        page.get_by_role("button", name="Connect notes").click()
        expect(accounts.get_by_role("status")).to_contain_text("Opening notes's sign-in page")
        (link,) = page.evaluate("window.__links")
        assert link.startswith(notes.url + "/authorize?") and page.evaluate("window.__confirms") == []
        assert requests.get(sign_in(link, "Ada"), timeout=30).status_code == 200  # the browser's callback
        page.reload()
        expect(page.get_by_role("button", name="Disconnect notes")).to_be_visible()
        expect(accounts).to_contain_text("connected since")
        shoot(page, "app-accounts.png", tmp_path)
        page.get_by_role("button", name="Disconnect notes").click()
        expect(accounts.get_by_role("status")).to_contain_text("Disconnected notes.")
        assert page.evaluate("window.__confirms") == [
            "Disconnect notes? Stepwise forgets your tokens and its tools go away."
        ]
        expect(page.get_by_role("button", name="Connect notes")).to_be_visible()
        assert opened.errors == []


def test_a_suggested_reply_is_sent_from_the_page_once_and_as_the_owner_edited_it(
    stack: Stack, app_url: str, browser: Browser, tmp_path: Path
) -> None:
    owner, contact = stack.new_user(), 7_400_000 + stack.new_user()
    connection = f"bc-app-{owner}"
    stack.emulation.post_update(updates.business_connection(owner, connection_id=connection))
    stack.telegram.add_business_connection(connection, owner)
    stack.telegram.contact_wrote(connection, contact)
    stack.anthropic.script(text("Sure, 1pm."))
    stack.emulation.post_update(
        updates.business_message(contact, "Lunch tomorrow?", connection_id=connection, first_name="Ann")
    )
    suggestion = stack.buttons(owner)
    time.sleep(0.2)  # its task token is stored before the message is sent

    opened = open_app(browser, app_url, init_data(owner))
    page = opened.page
    section = page.locator("#suggestions")
    expect(section).to_contain_text("Ann wrote: Lunch tomorrow?")
    expect(section).to_contain_text("Sure, 1pm.")
    assert "Waiting for your approval" in str(page.content()) and "Nothing is waiting." in str(
        page.locator("#approvals").text_content()
    ), "a suggestion is not among the generic approvals"
    shoot(page, "app-suggestion.png", tmp_path, for_docs=False)
    page.get_by_role("button", name="Send the reply to Ann").click()
    expect(page.locator("#suggestions .result.ok")).to_have_text("Sending ✅")
    stack.emulation.wait_idle(Conversation(contact, account=owner))
    assert [m["text"] for m in stack.telegram.business_messages(contact, connection)] == ["Sure, 1pm."]
    expect(section).to_contain_text("No suggested reply is waiting.")
    stack.press(owner, suggestion, "Send")  # the chat's old button: decided already, nothing more is sent
    stack.emulation.wait_idle(Conversation(contact, account=owner))
    assert len(stack.telegram.business_messages(contact, connection)) == 1
    assert opened.errors == []
