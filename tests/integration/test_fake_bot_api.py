"""BotApiClient against FakeBotApi over real HTTP on 127.0.0.1."""

from __future__ import annotations

import json
import threading
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest
import requests
from support.network import refusing_base_url

from stepwise.aws.http_transport import HttpTransport
from stepwise.telegram.client import BotApiClient
from stepwise.telegram.errors import (
    TelegramBadRequest,
    TelegramDeliveryUncertainError,
    TelegramForbidden,
    TelegramTransientError,
)
from stepwise.telegram.formatting import render_reply
from stepwise.telegram.keyboard import InlineKeyboardButton, InlineKeyboardMarkup
from stepwise_local.telegram_server import FakeBotApi

TOKEN = "424242:fake-token_for-tests"
CHAT = 1001


@pytest.fixture
def received() -> list[dict[str, Any]]:
    return []


@pytest.fixture
def api(received: list[dict[str, Any]]) -> Iterator[FakeBotApi]:
    with FakeBotApi(TOKEN, on_message=received.append) as server:
        yield server


def make_client(api: FakeBotApi, token: str = TOKEN, **kwargs: Any) -> BotApiClient:
    return BotApiClient(token, api.base_url, **{"timeout_seconds": 5, **kwargs})


def raw_post(api: FakeBotApi, method: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    session = requests.Session()
    session.trust_env = False
    response = session.post(f"{api.base_url}/bot{TOKEN}/{method}", json=body, timeout=5)
    return response.status_code, response.json()


def test_message_round_trip(api: FakeBotApi, received: list[dict[str, Any]]) -> None:
    # Given a client talking to the fake Bot API
    client = make_client(api)
    keyboard = InlineKeyboardMarkup(
        inline_keyboard=[[InlineKeyboardButton(text="More", callback_data="more")]]
    )
    # When two messages are sent (one with HTML and a keyboard) and the first is edited
    first = client.send_message(CHAT, "<b>Hello</b> a &lt; b", parse_mode="HTML", reply_markup=keyboard)
    second = client.send_message(CHAT, "plain & simple")
    client.edit_message_text(CHAT, first, "<i>Edited</i>", parse_mode="HTML")
    client.edit_message_text(CHAT, first, "<i>Edited</i>", parse_mode="HTML")  # unchanged: not an error
    client.send_chat_action(CHAT)
    # Then message ids increase, edits are applied and the callback saw every accepted message
    assert (first, second) == (1, 2)
    messages = api.messages(CHAT)
    assert [api.text_of(m) for m in messages] == ["Edited", "plain & simple"]
    assert messages[0]["edit_count"] == 1
    assert [(m["method"], m["message_id"]) for m in received] == [
        ("sendMessage", 1),
        ("sendMessage", 2),
        ("editMessageText", 1),
    ]
    assert received[0]["reply_markup"] == {"inline_keyboard": [[{"text": "More", "callback_data": "more"}]]}
    assert [c["params"]["action"] for c in api.calls("sendChatAction")] == ["typing"]


def test_rendered_reply_is_accepted(api: FakeBotApi) -> None:
    # Given a long Markdown reply with code, rendered into chunks
    markdown = (
        "**Intro** a < b && c > d\n\n```python\n" + "\n".join(f"x{n} = {n}" for n in range(900)) + "\n```"
    )
    chunks = render_reply(markdown)
    client = make_client(api)
    # When every chunk is sent as HTML
    for chunk in chunks:
        client.send_message(CHAT, chunk.html, parse_mode="HTML")
    # Then Telegram (the fake) accepted them all and the reader sees the plain text
    assert len(api.messages(CHAT)) == len(chunks) > 1
    assert [api.text_of(m) for m in api.messages(CHAT)] == [chunk.plain for chunk in chunks]


def test_unknown_field_is_rejected(api: FakeBotApi) -> None:
    # Given a request with a field sendMessage does not have
    status, body = raw_post(api, "sendMessage", {"chat_id": CHAT, "text": "hi", "colour": "red"})
    # Then it is a 400 naming the field, and nothing was recorded
    assert status == 400
    assert body["ok"] is False and "colour" in body["description"]
    assert api.calls() == []


def test_link_preview_options_are_accepted_as_telegram_accepts_them(api: FakeBotApi) -> None:
    # Given the client's sends and edits (previews off by default, Telegram's default when asked for)
    client = make_client(api)
    first = client.send_message(CHAT, '<a href="https://example.org/?q=x">x</a>', parse_mode="HTML")
    client.send_message(CHAT, "https://example.org", link_previews=True)
    client.edit_message_text(CHAT, first, "now https://example.org/?q=y")
    # Then the fake accepted them, kept the option, and says which would be previewed (fetched by Telegram)
    calls = [call["params"] for call in api.calls() if call["method"] in ("sendMessage", "editMessageText")]
    assert [call.get("link_preview_options") for call in calls] == [
        {"is_disabled": True},
        None,
        {"is_disabled": True},
    ]
    assert [api.previews_links(call) for call in calls] == [False, True, False]
    # And every field of LinkPreviewOptions is accepted, unknown fields ignored; a wrong type is refused
    options = {
        "is_disabled": False,
        "url": "https://example.org",
        "prefer_small_media": True,
        "prefer_large_media": False,
        "show_above_text": True,
        "future_field": 1,
    }
    status, _ = raw_post(api, "sendMessage", {"chat_id": CHAT, "text": "hi", "link_preview_options": options})
    assert status == 200
    for bad in ({"is_disabled": "yes"}, {"url": 5}, [True], "true"):
        status, body = raw_post(
            api, "sendMessage", {"chat_id": CHAT, "text": "hi", "link_preview_options": bad}
        )
        assert status == 400, body
        assert "link preview options" in body["description"] or "LinkPreviewOptions" in body["description"]
    status, _ = raw_post(
        api,
        "sendMessageDraft",
        {"chat_id": CHAT, "draft_id": 1, "text": "x", "link_preview_options": {"is_disabled": True}},
    )
    assert status == 400  # drafts take no such parameter (Bot API 10.1)


def test_missing_required_field_and_unknown_method(api: FakeBotApi) -> None:
    # Given requests missing chat_id and calling a method that does not exist
    status, body = raw_post(api, "sendMessage", {"text": "hi"})
    assert (status, "chat_id" in body["description"]) == (400, True)
    status, body = raw_post(api, "sendTelepathy", {"chat_id": CHAT})
    assert (status, body["error_code"]) == (404, 404)


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("<div>hi</div>", "Unsupported start tag"),
        ("<b>hi", "Can't find end tag"),
        ("<b><i>x</b></i>", "Unmatched end tag"),
        ("a < b", "reserved"),
        ("fish & chips", "reserved"),
    ],
)
def test_bad_html_is_rejected(api: FakeBotApi, text: str, fragment: str) -> None:
    # Given a client sending invalid Telegram HTML
    client = make_client(api)
    # When / Then Telegram's "can't parse entities" bad request comes back
    with pytest.raises(TelegramBadRequest, match="can't parse entities") as caught:
        client.send_message(CHAT, text, parse_mode="HTML")
    assert fragment in caught.value.description


def test_length_limits(api: FakeBotApi) -> None:
    # Given texts at, above and below the limits (counted after entity parsing)
    client = make_client(api)
    client.send_message(CHAT, "<b>" + "x" * 4096 + "</b>", parse_mode="HTML")
    # When / Then too long and empty texts are bad requests
    with pytest.raises(TelegramBadRequest, match="message is too long"):
        client.send_message(CHAT, "x" * 4097)
    with pytest.raises(TelegramBadRequest, match="text must be non-empty"):
        client.send_message(CHAT, "<b> </b>", parse_mode="HTML")
    keyboard = InlineKeyboardMarkup(
        inline_keyboard=[[InlineKeyboardButton(text="x", callback_data="d" * 65)]]
    )
    with pytest.raises(TelegramBadRequest, match="BUTTON_DATA_INVALID"):
        client.send_message(CHAT, "hi", reply_markup=keyboard)
    with pytest.raises(TelegramBadRequest, match="action"):
        client.send_chat_action(CHAT, "dancing")


def test_rate_limit_is_waited_out_by_the_client(api: FakeBotApi) -> None:
    # Given the next two sendMessage calls are rate limited (retry_after 1s, slept as 10 ms)
    api.fail_next("sendMessage", 429, "Too Many Requests: retry after 1", retry_after=1, times=2)
    slept: list[float] = []

    def tiny_sleep(seconds: float) -> None:
        slept.append(seconds)
        time.sleep(0.01)

    client = make_client(api, sleep=tiny_sleep)
    # When a message is sent
    message_id = client.send_message(CHAT, "patience")
    # Then the client waited twice and the third attempt got through
    assert message_id == 1
    assert slept == [1, 1]
    assert [a["status"] for a in api.attempts("sendMessage")] == [429, 429, 200]


def test_injected_server_error_is_transient_and_html_rejection_allows_plain_fallback(api: FakeBotApi) -> None:
    # Given a 502 and then one HTML rejection are injected
    client = make_client(api)
    api.fail_next("sendMessage", 502, "Bad Gateway")
    api.reject_html_next()
    # When / Then the 502 is transient, the HTML send is rejected and the plain fallback succeeds
    with pytest.raises(TelegramTransientError):
        client.send_message(CHAT, "one")
    with pytest.raises(TelegramBadRequest, match="can't parse entities"):
        client.send_message(CHAT, "<b>two</b>", parse_mode="HTML")
    assert client.send_message(CHAT, "two") == 1


def test_wrong_token_is_unauthorized(api: FakeBotApi) -> None:
    # Given a client with the wrong token
    client = make_client(api, token="1:wrong")
    # When / Then every call is forbidden, and the token is not in the error
    with pytest.raises(TelegramForbidden) as caught:
        client.send_chat_action(CHAT)
    assert caught.value.status == 401
    assert "1:wrong" not in str(caught.value)


def test_form_encoded_requests_webhook_and_get_me(api: FakeBotApi) -> None:
    # Given form-encoded calls as some tools send them
    form = urllib.parse.urlencode(
        {"url": "https://example.org/hook", "secret_token": "abc_DEF-1", "allowed_updates": '["message"]'}
    ).encode()
    request = urllib.request.Request(f"{api.base_url}/bot{TOKEN}/setWebhook", data=form, method="POST")
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(request, timeout=5) as response:
        assert json.load(response) == {"ok": True, "result": True}
    # When getMe and deleteWebhook are called through the client's generic call
    client = make_client(api)
    me = client.call("getMe", {})
    # Then the webhook was recorded with decoded values, and the bot identity comes from the token
    assert api.calls("setWebhook")[0]["params"]["allowed_updates"] == ["message"]
    assert me["id"] == 424242 and me["is_bot"] is True
    assert client.call("deleteWebhook", {}) is True
    with pytest.raises(TelegramBadRequest, match="secret token"):
        client.set_webhook("https://example.org/hook", "bad secret!", ["message"])


def test_concurrent_sends_get_distinct_ids(api: FakeBotApi) -> None:
    # Given eight threads sending to the same chat
    client_ids: list[int] = []
    lock = threading.Lock()

    def send(n: int) -> None:
        message_id = make_client(api).send_message(CHAT, f"m{n}")
        with lock:
            client_ids.append(message_id)

    threads = [threading.Thread(target=send, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    # Then every message got its own id
    assert sorted(client_ids) == list(range(1, 9))
    assert len(api.messages(CHAT)) == 8


def test_a_slow_answer_within_the_send_timeout_is_awaited_and_the_message_arrives_once(
    api: FakeBotApi,
) -> None:
    # Given Telegram answers sendMessage after 0.6 s: longer than other calls wait, shorter than sends wait
    api.slow_next("sendMessage", 0.6)
    client = make_client(api, timeout_seconds=0.2, send_timeout_seconds=5)
    # When a message is sent
    started = time.monotonic()
    message_id = client.send_message(CHAT, "worth the wait")
    # Then the client waited for the answer: one message, no error, nothing to retry
    assert time.monotonic() - started >= 0.6
    assert message_id == 1
    assert [api.text_of(m) for m in api.messages(CHAT)] == ["worth the wait"]


def test_no_answer_within_the_send_timeout_is_delivery_uncertain(api: FakeBotApi) -> None:
    # Given Telegram takes the message but answers later than the client waits
    api.slow_next("sendMessage", 0.8)
    client = make_client(api, send_timeout_seconds=0.2)
    # When / Then the client cannot know: the error says so, and indeed the message did arrive
    with pytest.raises(TelegramDeliveryUncertainError, match="may have delivered"):
        client.send_message(CHAT, "did it arrive?")
    assert [api.text_of(m) for m in api.messages(CHAT)] == ["did it arrive?"]


def test_a_slow_answer_to_a_call_that_may_be_repeated_is_plainly_transient(api: FakeBotApi) -> None:
    # Given a chat action answered later than the client waits
    api.slow_next("sendChatAction", 0.8)
    client = make_client(api, timeout_seconds=0.2)
    # When / Then it is transient (repeating it changes nothing), not uncertain
    with pytest.raises(TelegramTransientError) as caught:
        client.send_chat_action(CHAT)
    assert type(caught.value) is TelegramTransientError


def test_one_kept_connection_carries_a_clients_calls_and_downloads(api: FakeBotApi) -> None:
    # Given a client and its transport
    transport = HttpTransport()
    client = BotApiClient(TOKEN, api.base_url, transport=transport, timeout_seconds=5)
    file_id = api.add_file(b"x" * 200_000, "documents/big.bin")
    # When it sends, shows typing, downloads a file streamed in pieces and sends again
    client.send_message(CHAT, "one")
    client.send_chat_action(CHAT)
    assert client.download(file_id, 1_000_000) == b"x" * 200_000
    client.send_message(CHAT, "two")
    # Then the pool opened one connection and every request went over it
    pool = transport.pool().connection_from_url(api.base_url)  # type: ignore[attr-defined]
    assert (pool.num_connections, pool.num_requests) == (1, 5)


def test_a_refused_connection_sent_nothing_and_the_retry_delivers_once(api: FakeBotApi) -> None:
    # Given the first attempt finds nothing listening (connection refused), the next reaches Telegram
    with refusing_base_url() as unreachable:
        client = BotApiClient(TOKEN, unreachable, connect_timeout_seconds=1)
        # When the message is sent, Then the error is transient and nothing was sent
        with pytest.raises(TelegramTransientError, match="nothing was sent") as caught:
            client.send_message(CHAT, "once")
    assert type(caught.value) is TelegramTransientError
    # When it is retried against a reachable Telegram, Then it arrives exactly once
    assert make_client(api).send_message(CHAT, "once") == 1
    assert [api.text_of(m) for m in api.messages(CHAT)] == ["once"]


@pytest.mark.parametrize(
    ("commands", "fragment"),
    [
        ([{"command": "Help", "description": "upper case"}], "BOT_COMMAND_INVALID"),
        ([{"command": "/help", "description": "with a slash"}], "BOT_COMMAND_INVALID"),
        ([{"command": "help", "description": ""}], "description must be non-empty"),
        ([{"command": "help"}], "can't parse BotCommand"),
        ([{"command": f"c{n}", "description": "d"} for n in range(101)], "too many commands"),
    ],
)
def test_set_my_commands_rejects_what_telegram_rejects(
    api: FakeBotApi, commands: list[dict[str, str]], fragment: str
) -> None:
    with pytest.raises(TelegramBadRequest, match=fragment):
        make_client(api).call("setMyCommands", {"commands": commands})
    assert api.commands == []


def test_set_my_commands_keeps_the_menu(api: FakeBotApi) -> None:
    menu = [{"command": "help", "description": "The commands"}]
    assert make_client(api).call("setMyCommands", {"commands": menu}) is True
    assert api.commands == menu


def test_topics_are_checked_as_telegram_checks_them(api: FakeBotApi) -> None:
    """message_thread_id must name a topic the chat has; General (1) and unknown or deleted topics are
    "message thread not found"; createForumTopic is refused in a private chat while threaded mode is off."""
    for thread in (1, 99):
        status, body = raw_post(
            api, "sendMessage", {"chat_id": CHAT, "text": "hi", "message_thread_id": thread}
        )
        assert (status, body["description"]) == (400, "Bad Request: message thread not found")
    api.topics_enabled = False
    status, body = raw_post(api, "createForumTopic", {"chat_id": CHAT, "name": "Trip"})
    assert (status, body["description"]) == (400, "Bad Request: the chat is not a forum")
    status, body = raw_post(api, "getMe", {})
    assert body["result"]["has_topics_enabled"] is False
    api.topics_enabled = True
    status, body = raw_post(api, "createForumTopic", {"chat_id": CHAT, "name": ""})
    assert status == 400
    client = make_client(api)
    assert client.get_me()["has_topics_enabled"] is True
    thread = client.create_forum_topic(CHAT, "Trip")
    assert thread > 1 and api.topics(CHAT) == {thread: "Trip"}
    client.send_message(CHAT, "in the topic", message_thread_id=thread)
    client.send_chat_action(CHAT, "typing", message_thread_id=thread)
    client.send_message_draft(CHAT, 5, "draft", message_thread_id=thread)
    client.edit_forum_topic(CHAT, thread, "Trip to Lisbon")
    assert api.topics(CHAT) == {thread: "Trip to Lisbon"}
    status, body = raw_post(api, "editForumTopic", {"chat_id": CHAT, "message_thread_id": 99, "name": "x"})
    assert (status, body["description"]) == (400, "Bad Request: message thread not found")
    (sent,) = api.messages(CHAT)
    assert sent["message_thread_id"] == thread


def test_a_deleted_topics_message_reaches_the_main_chat_once(api: FakeBotApi) -> None:
    client = make_client(api)
    thread = api.add_topic(CHAT, "Groceries")
    client.send_message(CHAT, "before", message_thread_id=thread)
    api.delete_topic(CHAT, thread)
    client.send_message(CHAT, "<b>after</b>", parse_mode="HTML", message_thread_id=thread)
    client.send_chat_action(CHAT, "typing", message_thread_id=thread)
    first, second = api.messages(CHAT)
    assert first["message_thread_id"] == thread and "message_thread_id" not in second
    assert api.text_of(second) == f"(For topic #{thread}, which was deleted:)\n\nafter"
    assert len(api.attempts("sendMessage")) == 3, "refused once, then sent once"
    assert api.calls("sendChatAction") == [], "no typing shown anywhere for a deleted topic"


OWNER = 2002
CONTACT = 3003


def test_a_business_send_needs_a_connection_that_may_reply_and_a_contact_who_wrote_in_24_hours(
    api: FakeBotApi, received: list[dict[str, Any]]
) -> None:
    client = make_client(api)

    def say() -> int:
        return client.send_message(CONTACT, "See you at 6", business_connection_id="bc-1")

    def refusal() -> tuple[type[Exception], str]:
        with pytest.raises((TelegramBadRequest, TelegramForbidden)) as caught:
            say()
        return type(caught.value), caught.value.description

    # An unknown connection, then one whose contact has not written
    assert refusal() == (TelegramBadRequest, "Bad Request: business connection not found")
    api.add_business_connection("bc-1", OWNER)
    assert refusal() == (TelegramBadRequest, "Bad Request: BUSINESS_PEER_USAGE_MISSING")
    # The contact writes: a connection turned off, then one without the right to reply, are refused
    api.contact_wrote("bc-1", CONTACT)
    api.add_business_connection("bc-1", OWNER, enabled=False)
    assert refusal() == (TelegramBadRequest, "Bad Request: BUSINESS_CONNECTION_INVALID")
    api.add_business_connection("bc-1", OWNER, can_reply=False)
    assert refusal() == (TelegramForbidden, "Forbidden: BOT_ACCESS_FORBIDDEN")
    # A connection that may reply: the message goes out in the owner's name, and is edited through it
    api.add_business_connection("bc-1", OWNER)
    message_id = say()
    client.edit_message_text(CONTACT, message_id, "See you at 7", business_connection_id="bc-1")
    with pytest.raises(TelegramBadRequest, match="message to edit not found"):
        client.edit_message_text(CONTACT, message_id, "not through the connection")
    status, body = raw_post(
        api, "sendMessage", {"business_connection_id": "bc-1", "chat_id": OWNER, "text": "x"}
    )
    assert (status, body["description"]) == (400, "Bad Request: messages must not be sent to self")
    # 24 hours after the contact's message, the bot may no longer reply
    api.advance_clock(24 * 3600 + 1)
    assert refusal() == (TelegramBadRequest, "Bad Request: BUSINESS_PEER_USAGE_MISSING")
    # What went out through the connection is kept apart from the bot's own messages
    (sent,) = api.business_messages(CONTACT)
    assert (sent["business_connection_id"], sent["message_id"], sent["text"]) == ("bc-1", 1, "See you at 7")
    assert sent["edit_count"] == 1
    assert api.messages() == []
    assert api.business_messages(connection_id="other") == []
    assert [a["status"] for a in api.attempts("sendMessage")] == [400, 400, 400, 403, 200, 400, 400]
    assert [(m["method"], m.get("business_connection_id")) for m in received] == [
        ("sendMessage", "bc-1"),
        ("editMessageText", "bc-1"),
    ]


def test_a_business_send_answers_with_the_message_as_telegram_does(api: FakeBotApi) -> None:
    api.add_business_connection("bc-9", OWNER)
    api.contact_wrote("bc-9", CONTACT)
    status, body = raw_post(
        api, "sendMessage", {"business_connection_id": "bc-9", "chat_id": CONTACT, "text": "Hi"}
    )
    assert status == 200
    message = body["result"]
    assert message["business_connection_id"] == "bc-9"
    assert message["chat"] == {"id": CONTACT, "type": "private"}
    assert message["from"]["id"] == OWNER
    assert message["sender_business_bot"]["is_bot"] is True
