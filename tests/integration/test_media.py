"""Photos and documents through the real state machine: file ids in, the files' bytes out to the model."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from typing import Any

import pytest
from support.stack import Stack

from stepwise.telegram.client import BotApiClient
from stepwise.telegram.errors import TelegramBadRequest
from stepwise_local import updates
from stepwise_local.anthropic_server import text as answer
from stepwise_local.telegram_server import FakeBotApi

JPEG = b"\xff\xd8\xff\xe0\x00\x10JFIF" + bytes(range(256)) * 40
PDF = b"%PDF-1.7\n1 0 obj << /Type /Catalog >> endobj\n%%EOF\n"
CSV = b"date,amount\n2026-11-01,12.50\n2026-11-02,7.80\n"


def send(stack: Stack, update: dict[str, Any]) -> None:
    """Post an update through the webhook and wait for its turn to end."""
    response = stack.emulation.post_update(update)
    assert response["statusCode"] == 200, response
    chat_id = update["message"]["chat"]["id"]
    stack.emulation.wait_for_update(chat_id, update["update_id"], timeout=60)


def newest_user_blocks(stack: Stack) -> list[dict[str, Any]]:
    content: list[dict[str, Any]] = stack.anthropic.requests[-1]["messages"][-1]["content"]
    return content


def test_a_photo_with_a_caption_reaches_the_model_as_an_image_with_its_bytes(stack: Stack) -> None:
    # Given a photo the user sent, on Telegram's servers
    user = stack.new_user()
    file_id = stack.telegram.add_file(JPEG, f"photos/file_{user}.jpg")
    stack.anthropic.script(answer("A test pattern."))
    # When its update arrives
    send(stack, updates.photo_message(user, file_id, len(JPEG), caption="what is this?"))
    # Then the model gets the image, with the right bytes, then the caption; the user gets the answer
    image, caption = newest_user_blocks(stack)[:2]
    assert image["type"] == "image"
    assert image["source"] == {
        "type": "base64",
        "media_type": "image/jpeg",
        "data": base64.b64encode(JPEG).decode(),
    }
    assert (caption["type"], caption["text"]) == ("text", "what is this?")  # with the cache breakpoint
    assert stack.replies(user) == ["A test pattern."]
    # And the history keeps the file id, never the bytes
    (item,) = [i for i in stack.stored(user) if i["role"] == "user"]
    assert file_id in item["attachment"] and len(item["attachment"]) < 300


def test_the_next_turn_shows_an_earlier_photo_as_a_line_of_text_and_downloads_nothing(stack: Stack) -> None:
    user = stack.new_user()
    file_id = stack.telegram.add_file(JPEG, f"photos/again_{user}.jpg")
    send(stack, updates.photo_message(user, file_id, len(JPEG), caption="my cat"))
    downloads = len(stack.telegram.downloads)
    stack.say(user, "what breed is it?")
    first_message = stack.anthropic.requests[-1]["messages"][0]["content"]
    assert first_message[0]["text"] == "[photo: my cat]"
    assert len(stack.telegram.downloads) == downloads


@pytest.mark.parametrize(
    ("name", "mime", "data", "source"),
    [
        (
            "invoice.pdf",
            "application/pdf",
            PDF,
            {"type": "base64", "media_type": "application/pdf", "data": base64.b64encode(PDF).decode()},
        ),
        (
            "spending.csv",
            "text/csv",
            CSV,
            {"type": "text", "media_type": "text/plain", "data": CSV.decode()},
        ),
    ],
    ids=["pdf", "csv"],
)
def test_a_pdf_or_text_document_reaches_the_model_as_a_document_block(
    stack: Stack, name: str, mime: str, data: bytes, source: dict[str, Any]
) -> None:
    user = stack.new_user()
    file_id = stack.telegram.add_file(data, f"documents/{user}_{name}")
    send(stack, updates.document_message(user, file_id, len(data), name, mime, caption="sum it up"))
    document = newest_user_blocks(stack)[0]
    assert document == {"type": "document", "source": source, "title": name}


def test_a_document_too_large_gets_a_clear_message_and_no_model_call(stack: Stack) -> None:
    user = stack.new_user()
    update = updates.document_message(user, "BQACbig", 48_000_000, "scan.pdf", "application/pdf")
    send(stack, update)
    assert stack.anthropic.requests == []
    (reply,) = stack.replies(user)
    assert reply.startswith("scan.pdf is too large for me (48 MB; I read documents up to 10 MB).")
    assert all(call["params"]["file_id"] != "BQACbig" for call in stack.telegram.calls("getFile"))


def test_with_voice_off_a_voice_note_is_answered_that_it_cannot_be_listened_to(stack: Stack) -> None:
    stack.emulation.config.env["VOICE_TRANSCRIBER"] = "off"
    user = stack.new_user()
    send(stack, updates.voice_message(user))
    assert stack.anthropic.requests == []
    assert stack.replies(user) == ["I can't listen to voice notes here — could you type it instead?"]
    # and the model knows about it in the next turn
    stack.say(user, "sorry, typing now")
    texts = [b.get("text", "") for m in stack.anthropic.requests[-1]["messages"] for b in m["content"]]
    assert any(t.startswith("[voice note] (not passed on to you") for t in texts)


def test_a_voice_note_telegram_cannot_hand_over_is_kept_as_one_that_could_not_be_transcribed(
    stack: Stack,
) -> None:
    user = stack.new_user()
    send(stack, updates.voice_message(user, file_id="no-such-file"))
    assert stack.anthropic.requests == []
    assert stack.replies(user) == [
        "I couldn't make out that voice note: it couldn't be read as audio. "
        "Could you record it again, or type it?"
    ]
    stack.say(user, "sorry, typing now")
    texts = [b.get("text", "") for m in stack.anthropic.requests[-1]["messages"] for b in m["content"]]
    assert "[voice note that could not be transcribed]" in texts


# -- the Bot API client's downloads against the fake Bot API ---------------------------------------------

TOKEN = "777:media-token"


@pytest.fixture
def bot_api() -> Iterator[FakeBotApi]:
    with FakeBotApi(TOKEN) as server:
        yield server


def client(api: FakeBotApi) -> BotApiClient:
    return BotApiClient(TOKEN, api.base_url, timeout_seconds=5)


def test_a_file_is_downloaded_through_get_file_and_its_file_path(bot_api: FakeBotApi) -> None:
    file_id = bot_api.add_file(JPEG, "photos/file 7.jpg")
    assert client(bot_api).download(file_id, 1_000_000) == JPEG
    assert bot_api.downloads == ["photos/file 7.jpg"]


def test_an_unknown_file_or_one_over_the_limit_is_a_bad_request(bot_api: FakeBotApi) -> None:
    file_id = bot_api.add_file(JPEG, "photos/big.jpg")
    with pytest.raises(TelegramBadRequest, match="more than 100"):
        client(bot_api).download(file_id, 100)
    with pytest.raises(TelegramBadRequest, match="invalid file_id"):
        client(bot_api).download("nope", 100)
    assert bot_api.downloads == []
