"""Streamed answers as Telegram drafts: throttled, private chats only, best effort, never a reply."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from support.turn_fakes import ScriptedModel, drive_turn, text_response, turn_settings, turn_start

from stepwise.model.types import ModelResponse
from stepwise.services import TurnServices
from stepwise.telegram.conversation import Conversation
from stepwise.telegram.drafts import DraftStream, draft_id_for, draft_stream, render_draft
from stepwise.telegram.errors import TelegramTransientError
from stepwise_local.in_memory.telegram import InMemoryTelegram


class FakeClock:
    """Seconds that move only when the test says so (and, per call, by `per_call`)."""

    def __init__(self) -> None:
        self.now = 100.0
        self.per_call = 0.0

    def __call__(self) -> float:
        self.now += self.per_call
        return self.now


def plain(text: str) -> tuple[str, str | None]:
    return text, None


def stream_at(clock: FakeClock, telegram: InMemoryTelegram, **kwargs: Any) -> DraftStream:
    return DraftStream(
        lambda: telegram, Conversation(42), 7, 1.0, clock=clock, render=kwargs.get("render", plain)
    )


def draft_texts(telegram: InMemoryTelegram) -> list[str]:
    return [call["text"] for call in telegram.calls_of("send_message_draft")]


def test_the_draft_grows_at_most_once_a_second() -> None:
    clock, telegram = FakeClock(), InMemoryTelegram()
    drafts = stream_at(clock, telegram)
    for at, piece in [
        (0.0, "One"),
        (0.3, " two"),
        (0.6, " three"),
        (1.0, " four"),
        (1.2, " five"),
        (2.5, "."),
    ]:
        clock.now = 100.0 + at
        drafts(piece)
    assert draft_texts(telegram) == ["One", "One two three four", "One two three four five."]
    assert {call["chat_id"] for call in telegram.calls_of("send_message_draft")} == {42}
    assert {call["draft_id"] for call in telegram.calls_of("send_message_draft")} == {7}
    assert telegram.sent == [], "a draft is never a message"


def test_no_draft_is_sent_for_whitespace_or_for_text_already_shown() -> None:
    clock, telegram = FakeClock(), InMemoryTelegram()
    drafts = stream_at(clock, telegram)
    drafts("\n ")
    drafts("Hi")
    clock.now += 5
    drafts("")
    assert draft_texts(telegram) == ["\n Hi"]


def test_a_failing_draft_ends_drafts_for_the_call_without_failing_it() -> None:
    clock, telegram = FakeClock(), InMemoryTelegram()
    telegram.fail_next("send_message_draft", TelegramTransientError("sendMessageDraft", 429, "Too Many"))
    drafts = stream_at(clock, telegram)
    drafts("Hello")
    clock.now += 5
    drafts(" world")
    assert len(telegram.calls_of("send_message_draft")) == 1
    assert drafts.stopped and drafts.sent == 0


def test_a_slow_draft_ends_drafts_for_the_call() -> None:
    clock, telegram = FakeClock(), InMemoryTelegram()
    drafts = stream_at(clock, telegram)
    clock.per_call = 1.5  # every reading of the clock: the draft call in between took 1.5 s
    drafts("Hello")
    clock.now += 5
    drafts(" world")
    assert draft_texts(telegram) == ["Hello"] and drafts.stopped


def test_drafts_are_only_for_private_chats_and_only_when_switched_on() -> None:
    telegram = InMemoryTelegram()
    assert draft_stream(lambda: telegram, Conversation(42), "turn-1", 1.0) is not None
    assert draft_stream(lambda: telegram, Conversation(-100123), "turn-1", 1.0) is None, (
        "groups get no drafts"
    )
    assert draft_stream(lambda: telegram, Conversation(42), "turn-1", 0.0) is None, (
        "DRAFT_INTERVAL_SECONDS=0: off"
    )
    assert draft_stream(None, Conversation(42), "turn-1", 1.0) is None


def test_a_turn_keeps_one_non_zero_draft_id() -> None:
    ids = {draft_id_for(f"chat42-turn{n}-update{n}") for n in range(200)}
    assert len(ids) == 200 and all(0 < i < 2**31 for i in ids)
    assert draft_id_for("chat42-turn1-update1") == draft_id_for("chat42-turn1-update1")


def test_the_draft_shows_markdown_as_the_reply_will_and_stops_past_one_message() -> None:
    assert render_draft("Buy **milk") is not None
    assert render_draft("Buy **milk**") == ("Buy <b>milk</b>", "HTML")
    assert render_draft("word " * 2000) is None


@pytest.fixture
def drafting(services: TurnServices, telegram: InMemoryTelegram) -> TurnServices:
    outbound = dataclasses.replace(services.outbound, drafts=lambda: telegram)
    return dataclasses.replace(
        services, outbound=outbound, settings=turn_settings(draft_interval_seconds=1.0)
    )


def answer(services: TurnServices, chat_id: int, response: ModelResponse, model: ScriptedModel) -> None:
    model.responses.append(response)
    start = turn_start(services, "tell me something", chat_id=chat_id)
    drive_turn(services, start)


def test_a_private_chat_sees_a_draft_then_exactly_one_reply(
    drafting: TurnServices, model: ScriptedModel, telegram: InMemoryTelegram
) -> None:
    answer(drafting, 42, text_response("Here is a long and thoughtful answer."), model)
    drafts = telegram.calls_of("send_message_draft")
    assert drafts and drafts[0]["chat_id"] == 42 and drafts[0]["text"] == "Here"
    assert telegram.texts(42) == ["Here is a long and thoughtful answer."]


def test_a_group_chat_sees_no_draft(
    drafting: TurnServices, model: ScriptedModel, telegram: InMemoryTelegram
) -> None:
    answer(drafting, -100555, text_response("Here is a long and thoughtful answer."), model)
    assert telegram.calls_of("send_message_draft") == []
    assert telegram.texts(-100555) == ["Here is a long and thoughtful answer."]


def test_a_failing_draft_does_not_fail_the_turn(
    drafting: TurnServices, model: ScriptedModel, telegram: InMemoryTelegram
) -> None:
    telegram.fail_next("send_message_draft", TelegramTransientError("sendMessageDraft", None, "timed out"))
    answer(drafting, 42, text_response("Still answered."), model)
    assert telegram.texts(42) == ["Still answered."]
