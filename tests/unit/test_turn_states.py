"""The states of a turn, on in-memory ports."""

from __future__ import annotations

from typing import Any

import pytest
from support.turn_fakes import ScriptedModel, conversation_texts, text_response, turn_settings, turn_start

from stepwise.history.models import StoredMessage
from stepwise.model.errors import ModelTransientError
from stepwise.services import Tools, TurnServices
from stepwise.states.call_model import EMPTY_ANSWER, REFUSAL_ANSWER, call_model
from stepwise.states.contracts.call_model import CallModelInput
from stepwise.states.contracts.finish_turn import FinishTurnInput, FinishTurnOutput
from stepwise.states.contracts.load_context import LoadContextInput
from stepwise.states.deliver import FRIENDLY_ERROR
from stepwise.states.finish_turn import finish_turn
from stepwise.states.load_context import load_context
from stepwise.telegram.conversation import Conversation
from stepwise.telegram.errors import (
    TelegramBadRequest,
    TelegramDeliveryUncertainError,
    TelegramTransientError,
)
from stepwise.tools.registry import ToolRegistry
from stepwise.turn.ids import iso_utc
from stepwise.turn.ref import TurnRef
from stepwise_local.in_memory.telegram import InMemoryTelegram


def run_turn(services: TurnServices, text: str, update_id: int) -> None:
    start = turn_start(
        services, text, update_id=update_id, created_at=f"2026-11-22T09:{update_id:02d}:00.000Z"
    )
    load_context(start, services)
    call_model(CallModelInput(turn=start.turn), services)
    finish(services, start.turn)


def finish(services: TurnServices, turn: TurnRef, error: str | None = None) -> FinishTurnOutput:
    return finish_turn(FinishTurnInput(turn=turn, error=error), services)


def test_the_user_message_is_stored_once_even_when_load_context_runs_twice(services: TurnServices) -> None:
    start = turn_start(services, "hello")
    first = load_context(start, services)
    again = load_context(start, services)
    assert first.route == again.route == "model"
    assert [m.content for m in services.stores.messages.recent(Conversation(7), 20)] == ["hello"]


def test_load_context_shows_typing_for_a_message_that_waited(
    services: TurnServices, telegram: InMemoryTelegram
) -> None:
    load_context(turn_start(services, "hello"), services)  # received half an hour before the clock's now
    assert telegram.calls_of("send_chat_action") == [{"chat_id": 7, "action": "typing"}]


def test_load_context_does_not_repeat_the_typing_the_webhook_showed_a_moment_ago(
    services: TurnServices, telegram: InMemoryTelegram
) -> None:
    # Given a message the webhook received just now (its answer asked Telegram for "typing…")
    just_now = iso_utc(services.clock())
    # When its turn loads the context a second later
    route = load_context(turn_start(services, "hello", created_at=just_now), services).route
    # Then the turn goes to the model without a second chat action
    assert route == "model"
    assert telegram.calls_of("send_chat_action") == []


def test_a_failing_typing_indicator_does_not_fail_the_turn(
    services: TurnServices, telegram: InMemoryTelegram
) -> None:
    telegram.fail_next("send_chat_action", TelegramTransientError("sendChatAction", 502, "Bad Gateway"))
    assert load_context(turn_start(services, "hello"), services).route == "model"


def test_a_full_turn_replies_with_the_model_text_and_stores_both_messages(
    services: TurnServices, model: ScriptedModel, telegram: InMemoryTelegram
) -> None:
    model.responses.append(text_response("Hi **there**"))
    run_turn(services, "hello", 1)
    assert telegram.texts(7) == ["Hi <b>there</b>"]
    stored = services.stores.messages.recent(Conversation(7), 20)
    assert [(m.role, m.content) for m in stored] == [("user", "hello"), ("assistant", "Hi **there**")]


def test_the_model_sees_only_the_newest_history_limit_messages_oldest_first(
    services: TurnServices, model: ScriptedModel
) -> None:
    # the window is the newest history_limit messages (see the block tests below)
    services.settings = turn_settings(history_limit=4, history_margin=0)
    for n in range(6):
        services.stores.messages.add(
            StoredMessage(
                id=f"old{n}",
                chat_id=7,
                role="user" if n % 2 == 0 else "assistant",
                content=f"old {n}",
                created_at=f"2026-11-22T08:00:0{n}.000Z",
            )
        )
    model.responses.append(text_response("ok"))
    start = turn_start(services, "newest", created_at="2026-11-22T09:00:00.000Z")
    assert load_context(start, services).route == "model"
    call_model(CallModelInput(turn=start.turn), services)
    texts = conversation_texts(model.requests[0].messages)
    # the window is old 3..newest; old 3 is an assistant message and the list must start with the user
    assert texts == ["old 4", "old 5", "newest"]


def test_a_message_stored_after_the_turn_began_stays_out_of_its_context(
    services: TurnServices, model: ScriptedModel
) -> None:
    start = turn_start(services, "first", created_at="2026-11-22T09:00:00.000Z")
    load_context(start, services)
    services.stores.messages.add(
        StoredMessage(
            id="later", chat_id=7, role="user", content="later", created_at="2026-11-22T09:00:05.000Z"
        )
    )
    model.responses.append(text_response("ok"))
    call_model(CallModelInput(turn=start.turn), services)
    assert conversation_texts(model.requests[0].messages) == ["first"]


def test_call_model_sends_the_configured_model_and_a_system_prompt(
    services: TurnServices, model: ScriptedModel
) -> None:
    services.settings = turn_settings(anthropic_model="claude-sonnet-4-5")
    services.tools = Tools(built_in=lambda: ToolRegistry([]))
    model.responses.append(text_response("ok"))
    start = turn_start(services, "hello")
    load_context(start, services)
    call_model(CallModelInput(turn=start.turn), services)
    request = model.requests[0]
    assert request.model == "claude-sonnet-4-5"
    assert "No tools are available" in request.system[0]["text"]
    assert request.tools == []


@pytest.mark.parametrize(
    ("text", "stop", "expected"),
    [("", "end_turn", EMPTY_ANSWER), ("", "refusal", REFUSAL_ANSWER), ("cut o", "max_tokens", "cut o")],
)
def test_a_final_answer_is_never_empty(
    services: TurnServices,
    model: ScriptedModel,
    telegram: InMemoryTelegram,
    text: str,
    stop: str,
    expected: str,
) -> None:
    model.responses.append(text_response(text, stop))
    run_turn(services, "hello", 1)
    assert telegram.texts(7) == [expected]


def test_model_errors_propagate_for_the_state_machine_to_retry(
    services: TurnServices, model: ScriptedModel
) -> None:
    model.responses.append(ModelTransientError("overloaded"))
    start = turn_start(services, "hello")
    load_context(start, services)
    with pytest.raises(ModelTransientError):
        call_model(CallModelInput(turn=start.turn), services)
    assert services.stores.turns.get_reply(start.turn.turn_id) is None


class FailsOnce:
    """Wraps a TelegramClient; the n-th send_message fails once with a transient error."""

    def __init__(self, inner: InMemoryTelegram, fail_at: int) -> None:
        self.inner, self.fail_at, self.count = inner, fail_at, 0

    def send_message(self, *args: Any, **kwargs: Any) -> int:
        self.count += 1
        if self.count == self.fail_at:
            raise TelegramTransientError("sendMessage", 502, "Bad Gateway")
        return self.inner.send_message(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def test_a_long_reply_is_split_and_a_retried_delivery_resumes_where_it_stopped(
    services: TurnServices, model: ScriptedModel, telegram: InMemoryTelegram
) -> None:
    # Given a long answer, and Telegram failing once on the third chunk
    paragraphs = [f"Paragraph {n}: " + "word " * 300 for n in range(8)]
    model.responses.append(text_response("\n\n".join(paragraphs)))
    start = turn_start(services, "write a lot")
    load_context(start, services)
    call_model(CallModelInput(turn=start.turn), services)
    flaky = FailsOnce(telegram, fail_at=3)
    services.outbound.telegram = lambda: flaky  # type: ignore[assignment,return-value]
    with pytest.raises(TelegramTransientError):
        finish(services, start.turn)
    # When the state machine retries FinishTurn
    result = finish(services, start.turn)
    # Then every chunk arrives exactly once, in order, none over the limit
    assert result.sent_chunks > 2
    assert len(telegram.sent) == result.sent_chunks
    assert all(len(m.text) <= 4096 for m in telegram.sent)
    joined = " ".join(telegram.texts(7))
    positions = [joined.index(f"Paragraph {n}:") for n in range(8)]
    assert positions == sorted(positions)
    assert joined.count("Paragraph 0:") == 1


class DeliveredButUnconfirmed:
    """Wraps a TelegramClient; the n-th send_message reaches the chat but its answer is lost."""

    def __init__(self, inner: InMemoryTelegram, lost_at: int) -> None:
        self.inner, self.lost_at, self.count = inner, lost_at, 0

    def send_message(self, *args: Any, **kwargs: Any) -> int:
        self.count += 1
        message_id = self.inner.send_message(*args, **kwargs)
        if self.count == self.lost_at:
            raise TelegramDeliveryUncertainError("sendMessage", None, "no answer in time")
        return message_id

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def test_a_chunk_whose_delivery_is_uncertain_is_sent_again_and_only_that_one(
    services: TurnServices, model: ScriptedModel, telegram: InMemoryTelegram
) -> None:
    # Given a three-chunk reply whose second chunk reaches the chat but whose confirmation is lost
    paragraphs = [f"Paragraph {n}: " + "word " * 700 for n in range(3)]
    model.responses.append(text_response("\n\n".join(paragraphs)))
    start = turn_start(services, "write a lot")
    load_context(start, services)
    call_model(CallModelInput(turn=start.turn), services)
    lossy = DeliveredButUnconfirmed(telegram, lost_at=2)
    services.outbound.telegram = lambda: lossy  # type: ignore[assignment,return-value]
    with pytest.raises(TelegramDeliveryUncertainError):
        finish(services, start.turn)
    assert services.stores.turns.get_reply(start.turn.turn_id).sent_chunks == 1  # type: ignore[union-attr]
    # When the state machine retries FinishTurn
    result = finish(services, start.turn)
    # Then nothing is lost: the uncertain chunk is sent again (here a visible duplicate: the accepted cost),
    # the confirmed one is not
    assert result.sent_chunks == 3
    starts = [text.split(":")[0] for text in telegram.texts(7)]
    assert starts == ["Paragraph 0", "Paragraph 1", "Paragraph 1", "Paragraph 2"]


def test_rejected_html_falls_back_to_plain_text(
    services: TurnServices, model: ScriptedModel, telegram: InMemoryTelegram
) -> None:
    model.responses.append(text_response("a < b && **c**"))
    start = turn_start(services, "compare")
    load_context(start, services)
    call_model(CallModelInput(turn=start.turn), services)
    telegram.fail_next("send_message", TelegramBadRequest("sendMessage", 400, "can't parse entities"))
    finish(services, start.turn)
    assert telegram.texts(7) == ["a < b && c"]


def test_a_turn_left_with_nothing_to_answer_sends_nothing_and_frees_the_chat(
    services: TurnServices, telegram: InMemoryTelegram
) -> None:
    # Given a turn whose messages an earlier turn already took
    first = turn_start(services, "x", update_id=1)
    load_context(first, services)
    late = LoadContextInput(turn=first.turn.model_copy(update={"turn_id": "turn-late"}))
    # When it starts, then finishes
    assert load_context(late, services).route == "reply"
    result = finish(services, late.turn)
    # Then nothing is sent or stored, and the chat is not held by it
    assert (result.sent_chunks, result.saved, result.source) == (0, False, None)
    assert telegram.texts(7) == []


def test_the_error_path_tells_the_user_and_keeps_the_message_for_the_next_turn(
    services: TurnServices, model: ScriptedModel, telegram: InMemoryTelegram
) -> None:
    # Given a turn whose model calls all failed
    start = turn_start(services, "are you there?", update_id=1, created_at="2026-11-22T09:01:00.000Z")
    load_context(start, services)
    # When the error path runs
    saved = finish(services, start.turn, error="ModelTransientError")
    # Then the user got the friendly message, which is not stored as history
    assert telegram.texts(7) == [FRIENDLY_ERROR]
    assert not saved.saved
    # And the next turn's model call sees the earlier message too
    model.responses.append(text_response("yes"))
    run_turn(services, "hello?", 2)
    assert conversation_texts(model.requests[0].messages) == ["are you there?", "hello?"]


def test_finish_turn_run_twice_sends_and_saves_once(
    services: TurnServices, model: ScriptedModel, telegram: InMemoryTelegram
) -> None:
    model.responses.append(text_response("hi"))
    run_turn(services, "hello", 1)
    finish(services, TurnRef(turn_id="turn-1", chat_id=7, user_id=7, update_id=1))
    assert telegram.texts(7) == ["hi"]
    assert [m.role for m in services.stores.messages.recent(Conversation(7), 20)] == ["user", "assistant"]
