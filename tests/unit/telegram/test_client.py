"""Tests for BotApiClient (over a scripted urllib3 pool, no sockets) and InMemoryTelegram."""

from __future__ import annotations

import traceback
from typing import Any

import pytest
from support.scripted_http import (
    Answer,
    Canned,
    ScriptedPool,
    connect_timeout,
    connection_lost,
    read_timeout,
    refused,
    unresolvable,
)
from urllib3.exceptions import MaxRetryError

from stepwise.telegram.client import BotApiClient, TelegramClient, is_idempotent
from stepwise.telegram.errors import (
    TelegramBadRequest,
    TelegramDeliveryUncertainError,
    TelegramError,
    TelegramForbidden,
    TelegramTransientError,
)
from stepwise.telegram.keyboard import InlineKeyboardButton, InlineKeyboardMarkup
from stepwise_local.fake_speech import parse_multipart
from stepwise_local.in_memory.telegram import InMemoryTelegram

TOKEN = "123456:AAH-secret_token-value"


def make_client(answers: list[Answer], **kwargs: Any) -> tuple[BotApiClient, ScriptedPool, list[float]]:
    pool = ScriptedPool(answers)
    sleeps: list[float] = []
    client = BotApiClient(TOKEN, transport=pool.transport(), sleep=sleeps.append, **kwargs)
    return client, pool, sleeps


def ok(result: Any) -> tuple[int, Any]:
    return 200, {"ok": True, "result": result}


def failure(status: int, description: str, retry_after: int | None = None) -> tuple[int, Any]:
    body: dict[str, Any] = {"ok": False, "error_code": status, "description": description}
    if retry_after is not None:
        body["parameters"] = {"retry_after": retry_after}
    return status, body


def test_send_message_posts_json_without_none_fields_and_returns_message_id() -> None:
    # Given Telegram accepts the message
    client, pool, _ = make_client([ok({"message_id": 77, "date": 0, "chat": {"id": 5, "type": "private"}})])
    keyboard = InlineKeyboardMarkup(inline_keyboard=[[InlineKeyboardButton(text="Go", callback_data="go")]])
    # When a message is sent with a keyboard but no parse_mode
    message_id = client.send_message(5, "hi <there>", reply_markup=keyboard)
    # Then it went to POST /bot<token>/sendMessage with only the given fields
    assert message_id == 77
    request = pool.requests[0]
    assert request.method == "POST"
    assert request.url == f"https://api.telegram.org/bot{TOKEN}/sendMessage"
    assert request.headers["Content-Type"] == "application/json"
    assert pool.bodies() == [
        {
            "chat_id": 5,
            "text": "hi <there>",
            "link_preview_options": {"is_disabled": True},  # Telegram's servers fetch no link of it
            "reply_markup": {"inline_keyboard": [[{"text": "Go", "callback_data": "go"}]]},
        }
    ]


def test_link_previews_are_off_unless_asked_for_in_sends_and_edits() -> None:
    # Given a client whose calls all succeed
    client, pool, _ = make_client([ok({"message_id": 1}), ok({"message_id": 2}), ok(True), ok(True)])
    # When messages are sent and edited with and without link previews
    client.send_message(5, "see https://example.org/?q=secret")
    client.send_message(5, "see https://example.org", link_previews=True)
    client.edit_message_text(5, 1, "now https://example.org/?q=other")
    client.edit_message_text(5, 2, "now https://example.org", link_previews=True)
    # Then previews are disabled in each call but the two that ask for Telegram's default
    assert [body.get("link_preview_options") for body in pool.bodies()] == [
        {"is_disabled": True},
        None,
        {"is_disabled": True},
        None,
    ]


def test_business_connection_id_is_sent_only_when_given_in_sends_and_edits() -> None:
    # Given a client whose calls all succeed
    client, pool, _ = make_client([ok({"message_id": 4}), ok({"message_id": 5}), ok(True), ok(True)])
    # When a message is sent and edited through a business connection, and another without one
    client.send_message(5, "See you at 6", business_connection_id="bc-1")
    client.send_message(5, "to the bot's own chat")
    client.edit_message_text(5, 4, "See you at 7", business_connection_id="bc-1")
    client.edit_message_text(5, 5, "edited")
    # Then Telegram's parameter of that name is in the calls that gave it, and only in them
    assert [body.get("business_connection_id", "absent") for body in pool.bodies()] == [
        "bc-1",
        "absent",
        "bc-1",
        "absent",
    ]
    assert pool.bodies()[0] == {
        "business_connection_id": "bc-1",
        "chat_id": 5,
        "text": "See you at 6",
        "link_preview_options": {"is_disabled": True},
    }


def test_other_methods_send_their_parameters() -> None:
    # Given a client whose calls all succeed
    client, pool, _ = make_client([ok(True), ok(True), ok({"message_id": 3}), ok(True)])
    # When each method is called
    client.send_chat_action(5)
    client.answer_callback_query("cb-1")
    client.edit_message_text(5, 3, "<b>new</b>", parse_mode="HTML")
    client.set_webhook("https://example.org/hook", "s3cret", ["message", "callback_query"])
    # Then the right methods and bodies were posted
    assert [r.url.rsplit("/", 1)[1] for r in pool.requests if r.url] == [
        "sendChatAction",
        "answerCallbackQuery",
        "editMessageText",
        "setWebhook",
    ]
    assert pool.bodies() == [
        {"chat_id": 5, "action": "typing"},
        {"callback_query_id": "cb-1"},
        {
            "chat_id": 5,
            "message_id": 3,
            "text": "<b>new</b>",
            "parse_mode": "HTML",
            "link_preview_options": {"is_disabled": True},
        },
        {
            "url": "https://example.org/hook",
            "secret_token": "s3cret",
            "allowed_updates": ["message", "callback_query"],
        },
    ]


def test_rate_limit_is_waited_out_with_the_injected_sleep() -> None:
    # Given Telegram rate-limits twice, then accepts
    client, pool, sleeps = make_client(
        [failure(429, "Too Many Requests: retry after 2", 2), failure(429, "Too Many Requests", 5), ok(True)]
    )
    # When a chat action is sent
    client.send_chat_action(1)
    # Then the client slept for each retry_after and retried
    assert sleeps == [2, 5]
    assert len(pool.requests) == 3


def test_rate_limit_above_the_bound_is_transient_without_waiting() -> None:
    # Given a retry_after longer than the client may wait
    client, _, sleeps = make_client([failure(429, "Too Many Requests", 60)], max_retry_after_seconds=30)
    # When / Then the call fails as transient and carries retry_after
    with pytest.raises(TelegramTransientError) as caught:
        client.send_chat_action(1)
    assert caught.value.status == 429
    assert caught.value.retry_after == 60
    assert sleeps == []


def test_rate_limit_that_persists_after_the_allowed_waits_is_transient() -> None:
    # Given Telegram keeps rate limiting
    client, pool, sleeps = make_client([failure(429, "Too Many Requests", 1)] * 3, max_rate_limit_waits=2)
    # When / Then the client waits twice and then gives up
    with pytest.raises(TelegramTransientError):
        client.send_chat_action(1)
    assert sleeps == [1, 1]
    assert len(pool.requests) == 3


@pytest.mark.parametrize("status", [500, 502, 503])
def test_server_errors_are_transient_and_not_retried(status: int) -> None:
    # Given Telegram answers with a 5xx
    client, pool, _ = make_client([failure(status, "Internal Server Error")])
    # When / Then the error is transient and only one request was made
    with pytest.raises(TelegramTransientError) as caught:
        client.send_message(1, "x")
    assert caught.value.status == status
    assert caught.value.method == "sendMessage"
    assert len(pool.requests) == 1


def test_non_json_gateway_error_is_transient() -> None:
    # Given a proxy answers 502 with an HTML page
    client, _, _ = make_client([(502, b"<html>Bad Gateway</html>")])
    # When / Then it is a transient error
    with pytest.raises(TelegramTransientError):
        client.send_chat_action(1)


@pytest.mark.parametrize("error", [connect_timeout(), read_timeout()], ids=["connect", "read"])
def test_timeouts_are_transient(error: Exception) -> None:
    # Given the request times out
    client, _, _ = make_client([error])
    # When / Then a transient error is raised
    with pytest.raises(TelegramTransientError, match="timed out"):
        client.send_chat_action(1)


def refused_after_retries() -> MaxRetryError:
    """A refusal wrapped as urllib3 wraps it when it retries (the cause in `.reason`)."""
    return MaxRetryError(None, f"/bot{TOKEN}/sendMessage", refused())  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "error",
    [connect_timeout(), refused(), unresolvable(), refused_after_retries()],
    ids=["connect-timeout", "refused", "unresolvable", "refused-after-retries"],
)
@pytest.mark.parametrize("send_message", [True, False], ids=["sendMessage", "sendChatAction"])
def test_a_connection_never_made_is_transient_whatever_the_method(
    error: Exception, send_message: bool
) -> None:
    # Given the connection to Telegram cannot be made, so nothing was sent
    client, _, _ = make_client([error])
    # When / Then the error is plainly transient (always safe to retry), and says nothing was sent
    with pytest.raises(TelegramTransientError) as caught:
        client.send_message(1, "x") if send_message else client.send_chat_action(1)
    assert type(caught.value) is TelegramTransientError
    assert "nothing was sent" in caught.value.description and TOKEN not in caught.value.description


@pytest.mark.parametrize("error", [read_timeout(), connection_lost()], ids=["read-timeout", "reset"])
def test_a_sent_message_without_an_answer_is_delivery_uncertain(error: Exception) -> None:
    # Given sendMessage went out but no answer came back
    client, pool, _ = make_client([error])
    # When / Then the error says the delivery is uncertain (still transient), and it was one request
    with pytest.raises(TelegramDeliveryUncertainError) as caught:
        client.send_message(1, "x")
    assert isinstance(caught.value, TelegramTransientError)
    assert "may have delivered" in caught.value.description
    assert len(pool.requests) == 1


@pytest.mark.parametrize("error", [read_timeout(), connection_lost()], ids=["read-timeout", "reset"])
def test_a_lost_answer_to_a_call_that_may_be_repeated_is_plainly_transient(error: Exception) -> None:
    # Given calls that change nothing when repeated (chat action, edit, callback answer) lose their answer
    for call in (
        lambda client: client.send_chat_action(1),
        lambda client: client.edit_message_text(1, 2, "x"),
        lambda client: client.answer_callback_query("q", "ok"),
    ):
        client, _, _ = make_client([error])
        # When / Then they are transient, not uncertain
        with pytest.raises(TelegramTransientError) as caught:
            call(client)
        assert type(caught.value) is TelegramTransientError


def test_send_message_waits_longer_for_its_answer_than_other_calls() -> None:
    # Given separate connect, read and send timeouts
    client, pool, _ = make_client(
        [ok({"message_id": 1}), ok(True), ok(True)],
        connect_timeout_seconds=2,
        timeout_seconds=7,
        send_timeout_seconds=40,
    )
    # When a message, a chat action and a callback answer are sent
    client.send_message(1, "x")
    client.send_chat_action(1)
    client.answer_callback_query("q")
    # Then each used (connect, read) timeouts, with the generous read timeout for sendMessage only
    assert pool.timeouts == [(2, 40), (2, 7), (2, 7)]


def test_only_calls_that_post_something_new_are_not_idempotent() -> None:
    assert not any(map(is_idempotent, ["sendMessage", "sendPhoto", "copyMessage", "forwardMessage"]))
    assert all(
        map(is_idempotent, ["sendChatAction", "sendMessageDraft", "editMessageText", "answerCallbackQuery"])
    )


def test_bad_request_and_forbidden_are_classified() -> None:
    # Given a 400, a 403 and a 401 answer
    client, _, _ = make_client(
        [
            failure(400, "Bad Request: can't parse entities: Unsupported start tag"),
            failure(403, "Forbidden: bot was blocked by the user"),
            failure(401, "Unauthorized"),
            failure(409, "Conflict: terminated by other getUpdates request"),
        ]
    )
    # When / Then each maps to its exception class
    with pytest.raises(TelegramBadRequest, match="can't parse entities") as bad:
        client.send_message(1, "<x>", parse_mode="HTML")
    assert bad.value.status == 400
    with pytest.raises(TelegramForbidden, match="blocked"):
        client.send_message(1, "hi")
    with pytest.raises(TelegramForbidden):
        client.send_message(1, "hi")
    with pytest.raises(TelegramError) as other:
        client.send_message(1, "hi")
    assert type(other.value) is TelegramError


def test_token_never_appears_in_errors() -> None:
    # Given a network error and an error description that both mention the token
    client, _, _ = make_client(
        [
            MaxRetryError(None, f"/bot{TOKEN}/sendMessage", connection_lost()),  # type: ignore[arg-type]
            failure(404, f"Not Found: /bot{TOKEN}/sendMessage"),
        ]
    )
    for _ in range(2):
        # When the call fails
        with pytest.raises(TelegramError) as caught:
            client.send_message(1, "hi")
        # Then neither the message, the description nor the formatted traceback holds the token
        rendered = "".join(traceback.format_exception(caught.value))
        assert TOKEN not in rendered
        assert TOKEN not in caught.value.description
        assert "<redacted>" in caught.value.description
    assert TOKEN not in repr(client)


def test_the_token_in_a_failed_request_url_stays_out_of_the_traceback() -> None:
    # Given a send and a download whose time-outs keep the request's URL, and so the token
    client, pool, _ = make_client(
        [
            read_timeout(f"/bot{TOKEN}/sendMessage"),
            ok({"file_path": "voice/file_1.oga", "file_size": 3}),
            read_timeout(f"/file/bot{TOKEN}/voice/file_1.oga"),
        ]
    )
    for call in (lambda: client.send_message(1, "hi"), lambda: client.download("f1", 100)):
        # When the call fails
        with pytest.raises(TelegramError) as caught:
            call()
        # Then the formatted traceback holds neither the token nor the original exception
        rendered = "".join(traceback.format_exception(caught.value))
        assert TOKEN not in rendered and "ReadTimeoutError" not in rendered
    assert pool.requests[2].url == f"https://api.telegram.org/file/bot{TOKEN}/voice/file_1.oga"


def test_a_file_is_downloaded_chunk_by_chunk_and_the_size_cap_holds_while_streaming() -> None:
    # Given a file sent in chunks, and a second one whose size getFile does not tell and is over the cap
    chunks = [b"a" * 40, b"b" * 40, b"c" * 40]
    client, pool, _ = make_client(
        [
            ok({"file_path": "photos/file 7.jpg", "file_size": 120}),
            Canned(200, chunks=chunks),
            ok({"file_path": "documents/big.pdf"}),
            Canned(200, chunks=chunks),
        ]
    )
    # When both are downloaded
    assert client.download("ph1", 120) == b"".join(chunks)
    with pytest.raises(TelegramBadRequest, match="more than 100 bytes"):
        client.download("doc1", 100)
    # Then each was one streamed GET of the file path (quoted) after its getFile
    get_file, download = pool.requests[0], pool.requests[1]
    assert get_file.json() == {"file_id": "ph1"}
    assert (download.method, download.url) == (
        "GET",
        f"https://api.telegram.org/file/bot{TOKEN}/photos/file%207.jpg",
    )
    assert download.options["preload_content"] is False
    assert pool.timeouts[1] == (5.0, 10.0)


def test_a_download_that_fails_is_classified_like_a_call() -> None:
    # Given a file that is gone (404) and one whose connection drops mid-way
    client, _, _ = make_client(
        [
            ok({"file_path": "a.jpg"}),
            Canned(404, b"Not Found", {"Content-Type": "text/plain"}),
            ok({"file_path": "b.jpg"}),
            Canned(200, chunks=[b"partial"], broken=True),
        ]
    )
    # When / Then the 404 is an error of its status, and the dropped connection is transient
    with pytest.raises(TelegramError, match="download failed \\(HTTP 404\\)"):
        client.download("a", 1000)
    with pytest.raises(TelegramTransientError, match="network error: ProtocolError"):
        client.download("b", 1000)


def test_send_voice_uploads_the_audio_as_multipart_form_data() -> None:
    # Given Telegram accepts the voice message
    client, pool, _ = make_client([ok({"message_id": 9})])
    # When an Ogg Opus note is sent with its duration
    assert client.send_voice(5, b"OggS\x00voice", duration=3) == 9
    # Then it was one multipart POST to sendVoice: the parameters as text fields, the audio as a file
    (request,) = pool.requests
    assert request.url == f"https://api.telegram.org/bot{TOKEN}/sendVoice"
    fields = parse_multipart(request.headers["Content-Type"], request.body or b"")
    assert (fields["chat_id"].text, fields["duration"].text) == ("5", "3")
    voice = fields["voice"]
    assert (voice.data, voice.file_name, voice.content_type) == (b"OggS\x00voice", "reply.ogg", "audio/ogg")
    assert set(fields) == {"chat_id", "duration", "voice"}
    assert pool.timeouts == [(5.0, 20.0)]


def test_message_not_modified_is_success_for_edits() -> None:
    # Given Telegram says the edited message is unchanged
    client, _, _ = make_client(
        [failure(400, "Bad Request: message is not modified: specified new message content ...")]
    )
    # When the text is edited, Then no error is raised
    client.edit_message_text(1, 2, "same")


def test_other_bad_requests_on_edit_still_raise() -> None:
    # Given the message to edit does not exist
    client, _, _ = make_client([failure(400, "Bad Request: message to edit not found")])
    # When / Then the bad request is raised
    with pytest.raises(TelegramBadRequest):
        client.edit_message_text(1, 2, "new")


def test_custom_base_url_is_used() -> None:
    # Given a client pointed at a local Bot API server
    pool = ScriptedPool([ok(True)])
    client = BotApiClient(TOKEN, "http://127.0.0.1:8081/", transport=pool.transport())
    # When a call is made
    client.answer_callback_query("q", text="Done")
    # Then it goes to that server
    assert pool.requests[0].url == f"http://127.0.0.1:8081/bot{TOKEN}/answerCallbackQuery"


def test_in_memory_telegram_records_calls_and_messages() -> None:
    # Given the in-memory fake used by other modules' unit tests
    fake = InMemoryTelegram()
    client: TelegramClient = fake
    # When messages are sent and one is edited
    first = client.send_message(10, "hello", parse_mode="HTML")
    second = client.send_message(10, "world")
    client.edit_message_text(10, first, "hello again")
    client.send_chat_action(10)
    # Then calls, message ids and current texts are recorded
    assert (first, second) == (1, 2)
    assert fake.texts(10) == ["hello again", "world"]
    assert [name for name, _ in fake.calls] == [
        "send_message",
        "send_message",
        "edit_message_text",
        "send_chat_action",
    ]
    assert fake.calls_of("send_chat_action") == [{"chat_id": 10, "action": "typing"}]


def test_in_memory_telegram_keeps_the_business_connection_of_what_it_sends() -> None:
    # Given the in-memory fake
    fake = InMemoryTelegram()
    # When a message goes out through a business connection and one does not
    through = fake.send_message(10, "See you at 6", business_connection_id="bc-1")
    fake.send_message(10, "hello")
    # Then each message keeps its connection, and the calls record it only when given
    assert [(m.text, m.business_connection_id) for m in fake.sent] == [
        ("See you at 6", "bc-1"),
        ("hello", None),
    ]
    assert [c.get("business_connection_id") for c in fake.calls_of("send_message")] == ["bc-1", None]
    assert "business_connection_id" not in fake.calls_of("send_message")[1]
    # And the business message is edited through its connection only, as Telegram finds it
    with pytest.raises(TelegramBadRequest):
        fake.edit_message_text(10, through, "See you at 7")
    fake.edit_message_text(10, through, "See you at 7", business_connection_id="bc-1")
    assert fake.texts(10) == ["See you at 7", "hello"]


def test_in_memory_telegram_raises_injected_failures_once() -> None:
    # Given a failure injected for the next send_message
    fake = InMemoryTelegram()
    fake.fail_next("send_message", TelegramForbidden("sendMessage", 403, "Forbidden: bot was blocked"))
    # When messages are sent
    with pytest.raises(TelegramForbidden):
        fake.send_message(1, "a")
    message_id = fake.send_message(1, "b")
    # Then only the first failed, and both attempts were recorded
    assert message_id == 1
    assert len(fake.calls_of("send_message")) == 2
    assert fake.texts() == ["b"]


def test_in_memory_telegram_rejects_what_telegram_rejects() -> None:
    # Given the in-memory fake
    fake = InMemoryTelegram()
    # When / Then empty and over-long texts and unknown edits are bad requests
    with pytest.raises(TelegramBadRequest):
        fake.send_message(1, "  ")
    with pytest.raises(TelegramBadRequest):
        fake.send_message(1, "x" * 4097)
    with pytest.raises(TelegramBadRequest):
        fake.edit_message_text(1, 99, "x")
    with pytest.raises(ValueError):
        fake.fail_next("no_such_method", RuntimeError())


def test_a_message_for_a_deleted_topic_goes_once_to_the_main_chat_saying_which_topic() -> None:
    client, pool, _ = make_client(
        [failure(400, "Bad Request: message thread not found"), ok({"message_id": 8})]
    )
    assert client.send_message(5, "<b>the answer</b>", parse_mode="HTML", message_thread_id=70) == 8
    first, second = pool.bodies()
    no_preview = {"link_preview_options": {"is_disabled": True}}
    assert first == {
        "chat_id": 5,
        "message_thread_id": 70,
        "text": "<b>the answer</b>",
        "parse_mode": "HTML",
    } | (no_preview)
    assert (
        second
        == {
            "chat_id": 5,
            "text": "<i>(For topic #70, which was deleted:)</i>\n\n<b>the answer</b>",
            "parse_mode": "HTML",
        }
        | no_preview
    ), "sent once more, without the thread, saying which topic it was for"


def test_typing_and_drafts_for_a_deleted_topic_are_dropped_and_other_refusals_stay_errors() -> None:
    client, pool, _ = make_client(
        [
            failure(400, "Bad Request: message thread not found"),
            failure(400, "Bad Request: message thread not found"),
            failure(400, "Bad Request: chat not found"),
        ]
    )
    client.send_chat_action(5, "typing", message_thread_id=70)
    client.send_message_draft(5, 3, "dra", message_thread_id=70)
    with pytest.raises(TelegramBadRequest, match="chat not found"):
        client.send_message(5, "hi", message_thread_id=70)
    assert len(pool.requests) == 3, "nothing shown in the main chat for a typing or a draft, nothing repeated"


def test_a_refusal_without_a_thread_is_not_retried() -> None:
    client, pool, _ = make_client([failure(400, "Bad Request: message thread not found")])
    with pytest.raises(TelegramBadRequest):
        client.send_message(5, "hi")
    assert len(pool.requests) == 1


def test_topic_methods_send_their_parameters() -> None:
    client, pool, _ = make_client(
        [
            ok({"id": 1, "is_bot": True, "first_name": "B", "has_topics_enabled": True}),
            ok({"message_thread_id": 71, "name": "Trip", "icon_color": 7322096}),
            ok(True),
            ok({"message_id": 9}),
        ]
    )
    assert client.get_me()["has_topics_enabled"] is True
    assert client.create_forum_topic(5, "Trip") == 71
    client.edit_forum_topic(5, 71, "Trip to Lisbon")
    client.send_voice(5, b"OggS", message_thread_id=71)
    assert [r.url.rsplit("/", 1)[1] for r in pool.requests] == [
        "getMe",
        "createForumTopic",
        "editForumTopic",
        "sendVoice",
    ]
    requests, pool.requests = pool.requests, pool.requests[:3]
    assert pool.bodies() == [
        {},
        {"chat_id": 5, "name": "Trip"},
        {"chat_id": 5, "message_thread_id": 71, "name": "Trip to Lisbon"},
    ]
    fields = parse_multipart(requests[3].headers["Content-Type"], requests[3].body or b"")
    assert fields["message_thread_id"].text == "71", "a spoken answer goes to its topic too"


def test_a_message_sent_to_a_topic_that_comes_back_outside_it_is_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    client, _, _ = make_client(
        [ok({"message_id": 8, "message_thread_id": 70, "is_topic_message": True}), ok({"message_id": 9})]
    )
    with caplog.at_level("WARNING", logger="stepwise.telegram.client"):
        client.send_message(5, "in place", message_thread_id=70)
        assert caplog.records == []
        client.send_message(5, "misplaced", message_thread_id=70)
    assert [r.getMessage() for r in caplog.records] == [
        "Telegram sendMessage: the message sent to topic 70 is not in it"
    ]
