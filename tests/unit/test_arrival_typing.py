"""Which messages show "typing…" on arrival (the webhook's answer), and when LoadContext shows it again."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from stepwise.inbox.arrival_typing import typing_on_arrival, typing_still_shown
from stepwise.inbox.models import QueuedMessage
from stepwise.media.models import Attachment
from stepwise.turn.ids import iso_utc

NOW = datetime(2026, 11, 25, 22, 0, tzinfo=UTC)


def message(text: str = "hello", *, seconds_ago: float = 1.0, **fields: object) -> QueuedMessage:
    return QueuedMessage(
        chat_id=1,
        update_id=1,
        user_id=1,
        id="m1",
        text=text,
        received_at=iso_utc(NOW - timedelta(seconds=seconds_ago)),
        **fields,  # type: ignore[arg-type]
    )


@pytest.mark.parametrize(
    ("queued", "shown"),
    [
        (message("hello"), True),
        (message("", attachment=Attachment(kind="photo", file_id="f")), True),
        (message("", attachment=Attachment(kind="voice", file_id="f", seconds=3)), True),
        (message("/usage"), False),
        (message("", attachment=Attachment(kind="sticker", file_id="f", refusal="no stickers")), False),
        (message("time to stretch", kind="reminder"), False),
    ],
    ids=["text", "photo", "voice note", "command", "refused sticker", "reminder"],
)
def test_the_webhook_shows_typing_for_what_the_model_will_answer(queued: QueuedMessage, shown: bool) -> None:
    assert typing_on_arrival(queued) is shown


def test_typing_is_still_shown_for_a_fresh_batch_only() -> None:
    assert typing_still_shown([message(seconds_ago=6), message(seconds_ago=1)], NOW)
    assert not typing_still_shown([message(seconds_ago=5)], NOW)  # it has gone from the screen
    assert not typing_still_shown([message(seconds_ago=1), message("/help", seconds_ago=1)], NOW)
    assert not typing_still_shown([], NOW)
