"""Photos and documents: what the webhook keeps, what the model is shown, and what the user is told."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
from support.turn_fakes import ScriptedModel, text_response

from stepwise.history.models import StoredMessage
from stepwise.inbox.models import QueuedMessage
from stepwise.media.fetch import fetch_files
from stepwise.media.intake import MediaLimits, attachment_of
from stepwise.media.models import Attachment
from stepwise.media.render import content_blocks
from stepwise.model.types import ModelRequest
from stepwise.offline.api import OfflineModel
from stepwise.prompt.messages import build_messages
from stepwise.services import TurnServices
from stepwise.states.call_model import call_model
from stepwise.states.contracts.call_model import CallModelInput
from stepwise.states.load_context import load_context
from stepwise.telegram.conversation import Conversation
from stepwise.telegram.errors import TelegramTransientError
from stepwise.telegram.models import Update
from stepwise.turn.ref import TurnRef
from stepwise.turn.start import TurnStart
from stepwise_local import updates
from stepwise_local.anthropic_server import validate_request
from stepwise_local.in_memory.files import InMemoryFiles

JPEG = b"\xff\xd8\xff\xe0" + bytes(range(256)) * 4
PDF = b"%PDF-1.7\n" + b"0" * 500
LIMITS = MediaLimits(max_image_bytes=1_000_000, max_document_bytes=2_000_000)


def message_of(update: dict[str, Any]) -> Any:
    parsed = Update.model_validate_json(json.dumps(update))
    assert parsed.message is not None
    return parsed.message


# -- what the webhook keeps ----------------------------------------------------------------------------


def test_a_photo_is_kept_as_its_largest_size_within_the_image_limit() -> None:
    update = updates.photo_message(42, "big", 2_500_000, caption="what is this?")
    attachment = attachment_of(message_of(update), LIMITS)
    assert attachment == Attachment(kind="photo", file_id="big-m", size=14_800, mime_type="image/jpeg")


def test_a_photo_within_the_limit_is_kept_at_full_size() -> None:
    attachment = attachment_of(message_of(updates.photo_message(42, "full", 300_000)), LIMITS)
    assert attachment is not None and (attachment.file_id, attachment.taken) == ("full", True)


def test_a_photo_whose_every_size_is_too_large_is_refused_with_the_sizes() -> None:
    update = updates.photo_message(42, "huge", 9_000_000)
    attachment = attachment_of(message_of(update), MediaLimits(max_image_bytes=1_000))
    assert attachment is not None and attachment.refusal is not None
    assert "too large" in attachment.refusal and "0.001 MB" in attachment.refusal


@pytest.mark.parametrize(
    ("file_name", "mime_type"),
    [
        ("report.pdf", "application/pdf"),
        ("notes.md", "text/markdown"),
        ("data.csv", "text/csv"),
        ("config.json", "application/json"),
        ("notes.md", "application/octet-stream"),
        ("diagram.png", "image/png"),
    ],
)
def test_pdfs_text_files_and_images_sent_as_files_are_taken(file_name: str, mime_type: str) -> None:
    update = updates.document_message(42, "doc", 5_000, file_name, mime_type)
    attachment = attachment_of(message_of(update), LIMITS)
    assert attachment is not None and attachment.taken
    assert (attachment.kind, attachment.file_name, attachment.mime_type) == ("document", file_name, mime_type)


def test_a_word_document_is_refused_with_what_can_be_read() -> None:
    mime = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
    update = updates.document_message(42, "doc", 5_000, "cv.docx", mime)
    attachment = attachment_of(message_of(update), LIMITS)
    assert attachment is not None
    assert attachment.refusal == f"I can read PDFs, text files and images, but not cv.docx ({mime}) yet."


def test_a_document_over_the_limit_is_refused_saying_how_large_it_is_and_what_fits() -> None:
    update = updates.document_message(42, "doc", 12_300_000, "scan.pdf", "application/pdf")
    attachment = attachment_of(message_of(update), MediaLimits())
    assert attachment is not None and attachment.refusal is not None
    assert attachment.refusal.startswith(
        "scan.pdf is too large for me (12.3 MB; I read documents up to 10 MB)"
    )


def test_a_sticker_is_refused_with_a_clear_notice() -> None:
    attachment = attachment_of(message_of(updates.sticker_message(42)), LIMITS)
    assert attachment is not None and attachment.refusal is not None
    assert attachment.refusal.startswith("I can't see stickers yet")


@pytest.mark.parametrize("kind", ["voice", "audio", "video_note"])
def test_a_voice_note_within_the_limits_is_taken_to_be_transcribed(kind: str) -> None:
    # Given a note of 3 s under a 300 s limit
    update = updates.voice_message(42, kind=kind, duration=3)
    # When the webhook keeps it
    attachment = attachment_of(message_of(update), LIMITS)
    # Then it is taken, with its length, and never shown to the model as a file
    assert attachment is not None and attachment.taken and attachment.is_audio
    assert (attachment.kind, attachment.seconds) == (kind, 3)


def test_a_voice_note_longer_than_the_limit_is_refused_with_the_limit_in_words() -> None:
    limits = MediaLimits(voice_max_seconds=300)
    attachment = attachment_of(message_of(updates.voice_message(42, duration=423)), limits)
    assert attachment is not None and attachment.refusal == (
        "That voice note is 7 min 3 s long; I transcribe up to 5 min. "
        "Could you send a shorter one, or type it?"
    )


def test_a_voice_note_over_telegrams_download_limit_is_refused_before_any_download() -> None:
    update = updates.voice_message(42, duration=60, file_size=25_000_000)
    attachment = attachment_of(message_of(update), MediaLimits())
    assert attachment is not None and attachment.refusal is not None
    assert "too large for me to download (25 MB" in attachment.refusal


def test_a_voice_note_larger_than_its_longest_length_could_be_is_refused_before_any_download() -> None:
    # 5 min at 320 kb/s is 12 MB: a "3 s" voice note of 12.5 MB is not what it says
    update = updates.voice_message(42, duration=3, file_size=12_500_000)
    attachment = attachment_of(message_of(update), MediaLimits(voice_max_seconds=300))
    assert attachment is not None and attachment.refusal == (
        "That voice note is 12.5 MB, larger than 5 min of audio should be (12 MB at most); "
        "I transcribe up to 5 min. Could you send a shorter one, or type it?"
    )


@pytest.mark.parametrize(
    ("kind", "taken", "refused"), [("voice", 12_000_000, 12_000_001), ("video_note", 15_000_000, 15_000_001)]
)
def test_the_size_bound_is_the_longest_length_at_a_generous_bitrate(
    kind: str, taken: int, refused: int
) -> None:
    # 320 kb/s for a voice note or an audio file; a round video message (60 s at most) has a picture: 2 Mb/s
    limits = MediaLimits(voice_max_seconds=300 if kind == "voice" else 60)
    ok = attachment_of(message_of(updates.voice_message(42, kind=kind, duration=3, file_size=taken)), limits)
    assert ok is not None and ok.taken
    too_large = attachment_of(
        message_of(updates.voice_message(42, kind=kind, duration=3, file_size=refused)), limits
    )
    assert too_large is not None and too_large.refusal is not None and "larger than" in too_large.refusal


def test_with_voice_off_a_voice_note_gets_the_notice_it_always_had() -> None:
    attachment = attachment_of(message_of(updates.voice_message(42)), MediaLimits(voice_on=False))
    assert attachment is not None
    assert attachment.refusal == "I can't listen to voice notes here — could you type it instead?"


@pytest.mark.parametrize(
    "change",
    [
        {"file_size": "131208"},
        {"file_id": ""},
        {"file_id": "x" * 257},
        {"width": -1},
        {"file_size": 2**60},
    ],
)
def test_a_photo_with_values_outside_telegrams_ranges_is_not_an_update(change: dict[str, Any]) -> None:
    update = updates.photo_message(42, "p", 100)
    update["message"]["photo"][-1].update(change)
    with pytest.raises(ValueError, match="validation error"):
        Update.model_validate_json(json.dumps(update))


def test_a_photo_with_too_many_sizes_is_not_an_update() -> None:
    update = updates.photo_message(42, "p", 100)
    update["message"]["photo"] = update["message"]["photo"] * 11
    with pytest.raises(ValueError, match="validation error"):
        Update.model_validate_json(json.dumps(update))


# -- what the model is shown -----------------------------------------------------------------------------


def stored(
    n: int, role: str = "user", content: str = "", attachment: Attachment | None = None
) -> StoredMessage:
    return StoredMessage(
        id=f"m{n}",
        chat_id=7,
        role=role,  # type: ignore[arg-type]
        content=content,
        created_at=f"2026-11-22T09:00:{n:02d}.000Z",
        attachment=attachment,
    )


PHOTO = Attachment(kind="photo", file_id="ph1", size=len(JPEG), mime_type="image/jpeg")
PDF_DOC = Attachment(kind="document", file_id="pdf1", mime_type="application/pdf", file_name="r.pdf")
TEXT_DOC = Attachment(kind="document", file_id="md1", mime_type="text/markdown", file_name="notes.md")


def test_the_photo_of_the_message_being_answered_is_an_image_block_before_its_caption() -> None:
    blocks = content_blocks(stored(1, content="what is this?", attachment=PHOTO), {"ph1": JPEG})
    assert blocks == [
        {
            "type": "image",
            "source": {"type": "base64", "media_type": "image/jpeg", "data": base64.b64encode(JPEG).decode()},
        },
        {"type": "text", "text": "what is this?"},
    ]


def test_a_pdf_is_a_base64_document_and_a_text_file_a_plain_text_document() -> None:
    (pdf,) = content_blocks(stored(1, attachment=PDF_DOC), {"pdf1": PDF})
    assert pdf == {
        "type": "document",
        "source": {"type": "base64", "media_type": "application/pdf", "data": base64.b64encode(PDF).decode()},
        "title": "r.pdf",
    }
    (text,) = content_blocks(stored(2, attachment=TEXT_DOC), {"md1": "# Plan\n- café".encode()})
    assert text == {
        "type": "document",
        "source": {"type": "text", "media_type": "text/plain", "data": "# Plan\n- café"},
        "title": "notes.md",
    }


def test_an_older_photo_is_one_line_of_text_with_its_caption() -> None:
    assert content_blocks(stored(1, content="my cat", attachment=PHOTO), {}) == [
        {"type": "text", "text": "[photo: my cat]"}
    ]
    assert content_blocks(stored(2, attachment=PDF_DOC), {}) == [{"type": "text", "text": "[document r.pdf]"}]


def test_a_refused_file_tells_the_model_what_the_user_was_told() -> None:
    voice = Attachment(kind="voice", file_id="v", refusal="I can't listen to voice notes yet.")
    (block,) = content_blocks(stored(1, attachment=voice), {})
    assert block["text"] == (
        "[voice note] (not passed on to you; the user was told: I can't listen to voice notes yet.)"
    )


def test_only_the_files_of_the_messages_being_answered_are_downloaded_each_once() -> None:
    files = InMemoryFiles()
    files.add("ph1", JPEG)
    files.add("pdf1", PDF)
    history = [
        stored(1, content="old", attachment=PHOTO),
        stored(2, role="assistant", content="a cat"),
        stored(3, attachment=PDF_DOC),
        stored(4, content="same photo again", attachment=PHOTO),
    ]
    assert fetch_files(history, files, LIMITS) == {"pdf1": PDF, "ph1": JPEG}
    assert files.downloads == ["pdf1", "ph1"]


def test_a_file_telegram_refuses_shows_as_text_and_a_transient_failure_is_retried_by_the_state() -> None:
    files = InMemoryFiles()
    history = [stored(1, content="look", attachment=PHOTO)]
    fetched = fetch_files(history, files, LIMITS)  # unknown to Telegram: 400
    assert fetched == {"ph1": None}
    assert content_blocks(history[0], fetched) == [
        {"type": "text", "text": "[photo: look] (the file could not be fetched from Telegram)"}
    ]
    files.fail_next(TelegramTransientError("getFile", 502, "Bad Gateway"))
    with pytest.raises(TelegramTransientError):
        fetch_files(history, files, LIMITS)


def test_a_file_larger_than_its_update_said_is_not_sent() -> None:
    files = InMemoryFiles()
    files.add("ph1", JPEG)
    assert fetch_files([stored(1, attachment=PHOTO)], files, MediaLimits(max_image_bytes=10)) == {"ph1": None}


def test_the_same_history_renders_the_same_bytes_turn_after_turn() -> None:
    # Given a photo answered in an earlier turn, and a new question about it
    history = [
        stored(1, content="my cat", attachment=PHOTO),
        stored(2, role="assistant", content="A tabby!"),
        stored(3, content="what breed?"),
    ]
    # When two calls render it (the second after more files were fetched for another message)
    first = json.dumps(build_messages(history, [], "ctx"))
    second = json.dumps(build_messages(history, [], "ctx", files={"other": JPEG}))
    # Then the bytes are identical, and the old photo is a line of text
    assert first == second
    assert '"[photo: my cat]"' in first


# -- a turn ----------------------------------------------------------------------------------------------


def queue(services: TurnServices, update_id: int, text: str, attachment: Attachment | None) -> TurnStart:
    services.outbound.sequencer().inbox.enqueue(
        QueuedMessage(
            chat_id=7,
            update_id=update_id,
            user_id=7,
            id=f"msg-{update_id}",
            text=text,
            attachment=attachment,
            received_at=f"2026-11-22T09:00:{update_id:02d}.000Z",
        ),
        expires_at=0,
    )
    return TurnStart(turn=TurnRef(turn_id=f"turn-{update_id}", chat_id=7, user_id=7, update_id=update_id))


def test_a_photo_reaches_the_model_as_an_image_and_is_stored_without_its_bytes(
    services: TurnServices, model: ScriptedModel
) -> None:
    files = InMemoryFiles()
    files.add("ph1", JPEG)
    services.outbound.files = lambda: files
    start = queue(services, 1, "what is this?", PHOTO)
    load_context(start, services)
    model.responses.append(text_response("A cat."))
    call_model(CallModelInput(turn=start.turn), services)
    (request,) = model.requests
    kinds = [block["type"] for block in request.messages[-1]["content"]]
    assert kinds == ["image", "text", "text"]  # the photo, its caption, the turn's context
    (message,) = services.stores.messages.recent(Conversation(7), 5)
    assert (message.content, message.attachment) == ("what is this?", PHOTO)


def test_a_voice_note_alone_is_answered_with_its_notice_and_no_model_call(
    services: TurnServices, model: ScriptedModel
) -> None:
    voice = Attachment(kind="voice", file_id="v", refusal="I can't listen to voice notes yet.")
    start = queue(services, 1, "", voice)
    output = load_context(start, services)
    assert output.route == "reply" and model.requests == []
    reply = services.stores.turns.get_reply(start.turn.turn_id)
    assert reply is not None and (reply.text, reply.source) == (
        "I can't listen to voice notes yet.",
        "notice",
    )


def test_a_refused_file_in_a_burst_with_text_is_noted_before_the_models_answer(
    services: TurnServices, model: ScriptedModel
) -> None:
    voice = Attachment(kind="voice", file_id="v", refusal="I can't listen to voice notes yet.")
    queue(services, 1, "", voice)
    start = queue(services, 2, "and what's the weather?", None)
    load_context(start, services)
    model.responses.append(text_response("Sunny."))
    call_model(CallModelInput(turn=start.turn), services)
    reply = services.stores.turns.get_reply(start.turn.turn_id)
    assert reply is not None and reply.text == "I can't listen to voice notes yet.\n\nSunny."


def test_offline_a_photo_gets_a_plain_i_cannot_see_images_answer() -> None:
    request = ModelRequest(
        model="m",
        max_tokens=100,
        system=[],
        messages=[{"role": "user", "content": content_blocks(stored(1, "user", "dinner?", PHOTO), {})}],
    )
    answer = OfflineModel().complete(request).content[0]["text"]
    assert answer.startswith("I can't see images in offline mode")


# -- the fake Messages API checks files as the real one does -----------------------------------------------


def request_with(*blocks: dict[str, Any]) -> dict[str, Any]:
    return {"model": "m", "max_tokens": 10, "messages": [{"role": "user", "content": list(blocks)}]}


def test_the_fake_messages_api_accepts_the_images_and_documents_stepwise_renders() -> None:
    blocks = [
        *content_blocks(stored(1, attachment=PHOTO), {"ph1": JPEG}),
        *content_blocks(stored(2, attachment=PDF_DOC), {"pdf1": PDF}),
        *content_blocks(stored(3, attachment=TEXT_DOC), {"md1": b"# notes"}),
    ]
    assert validate_request(request_with(*blocks)) is None


@pytest.mark.parametrize(
    ("block", "problem"),
    [
        (
            {"type": "image", "source": {"type": "base64", "media_type": "image/bmp", "data": ""}},
            "media_type",
        ),
        (
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "/9j/4AAQ"}},
            "does not appear to be image/png",
        ),
        ({"type": "image", "source": {"type": "base64", "media_type": "image/jpeg", "data": "!!"}}, "base64"),
        (
            {
                "type": "document",
                "source": {"type": "base64", "media_type": "application/pdf", "data": "QUJD"},
            },
            "PDF specified was not valid",
        ),
        (
            {"type": "document", "source": {"type": "text", "media_type": "text/markdown", "data": "x"}},
            "text/plain",
        ),
        ({"type": "audio", "source": {}}, "unknown content block type"),
    ],
)
def test_the_fake_messages_api_refuses_files_the_real_one_refuses(
    block: dict[str, Any], problem: str
) -> None:
    refusal = validate_request(request_with(block))
    assert refusal is not None and problem in refusal
