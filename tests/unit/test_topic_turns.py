"""A topic's turn: its own history, /reset and window; every send in its topic; reminders and jobs set in a
topic come back to it (in-memory ports)."""

from __future__ import annotations

import dataclasses
import itertools
from datetime import UTC, datetime

import pytest
from support.turn_fakes import (
    ScriptedModel,
    conversation_texts,
    drive_turn,
    text_response,
    tool_use,
    turn_settings,
    turn_start,
)

from stepwise.commands.new_topic import NOT_A_FORUM
from stepwise.history.models import StoredMessage
from stepwise.inbox.models import Fired
from stepwise.memory.keys import summary_key
from stepwise.memory.service import MemoryService
from stepwise.memory.summarizer import (
    ExtractiveSummarizer,
    SummarizeInput,
    SummarizeServices,
    summarize_chats,
)
from stepwise.reminders.firing import FireServices, fire
from stepwise.reminders.models import FireEvent
from stepwise.services import TurnServices
from stepwise.states.contracts.finish_turn import FinishTurnInput
from stepwise.states.contracts.load_context import LoadContextInput
from stepwise.states.finish_turn import finish_turn
from stepwise.states.load_context import load_context
from stepwise.telegram.conversation import Conversation
from stepwise.telegram.errors import TelegramTransientError
from stepwise_local.in_memory.chats import InMemoryChatStore
from stepwise_local.in_memory.embedder import LocalHashEmbedder
from stepwise_local.in_memory.history import InMemoryMessageRepository
from stepwise_local.in_memory.reminders import InMemoryReminderStore, InMemorySchedules
from stepwise_local.in_memory.telegram import InMemoryTelegram
from stepwise_local.in_memory.vector_index import InMemoryVectorIndex

USER = 7


def ask(
    services: TurnServices, model: ScriptedModel, text: str, answer: str, update_id: int, topic: int | None
):
    model.responses.append(text_response(answer))
    drive_turn(services, turn_start(services, text, chat_id=USER, update_id=update_id, topic=topic))
    return model.requests[-1]


def sends(telegram: InMemoryTelegram) -> list[tuple[str, int | None]]:
    """Each call that shows something in the chat, with the topic it went to."""
    shown = ("send_message", "send_chat_action", "send_message_draft", "send_voice")
    return [(name, params.get("message_thread_id")) for name, params in telegram.calls if name in shown]


def test_two_topics_and_the_chat_keep_their_histories_apart(
    services: TurnServices, model: ScriptedModel
) -> None:
    ask(services, model, "In this topic my name is Ann.", "Hello Ann.", 1, 70)
    ask(services, model, "Here we plan a trip.", "Where to?", 2, 90)
    ask(services, model, "Main chat: hello.", "Hi.", 3, None)
    in_70 = ask(services, model, "What is my name?", "Ann.", 4, 70)
    in_90 = ask(services, model, "To Lisbon.", "Nice.", 5, 90)
    assert conversation_texts(in_70.messages) == [
        "In this topic my name is Ann.",
        "Hello Ann.",
        "What is my name?",
    ]
    assert conversation_texts(in_90.messages) == ["Here we plan a trip.", "Where to?", "To Lisbon."]
    main = services.stores.messages.recent(Conversation(USER), 10)
    assert [m.content for m in main] == ["Main chat: hello.", "Hi."]
    assert {(m.chat_id, m.topic) for m in services.stores.messages.recent(Conversation(USER, 70), 10)} == {
        (USER, 70)
    }


def test_every_send_of_a_topics_turn_carries_its_thread_and_the_main_chats_none(
    services: TurnServices, model: ScriptedModel, telegram: InMemoryTelegram
) -> None:
    outbound = dataclasses.replace(services.outbound, drafts=lambda: telegram)
    drafting = dataclasses.replace(
        services, outbound=outbound, settings=turn_settings(draft_interval_seconds=0.001)
    )
    long_answer = ("A paragraph of a long answer. " * 60 + "\n\n") * 4  # more than one message
    ask(drafting, model, "Tell me a lot.", long_answer, 1, 70)
    in_topic = sends(telegram)
    kinds = {name for name, _ in in_topic}
    assert kinds == {"send_chat_action", "send_message_draft", "send_message"}
    assert len([1 for name, _ in in_topic if name == "send_message"]) >= 2, "every chunk"
    assert {thread for _, thread in in_topic} == {70}
    telegram.calls.clear()
    ask(drafting, model, "And here?", "Here too.", 2, None)
    assert sends(telegram) and {thread for _, thread in sends(telegram)} == {None}
    assert all("message_thread_id" not in params for _, params in telegram.calls), "none sent, not even 1"


def test_reset_in_a_topic_starts_only_that_topics_window_afresh(
    services: TurnServices, model: ScriptedModel
) -> None:
    ask(services, model, "Topic 70: remember apples.", "Apples.", 1, 70)
    ask(services, model, "Topic 90: remember pears.", "Pears.", 2, 90)
    drive_turn(services, turn_start(services, "/reset", chat_id=USER, update_id=3, topic=70))
    after_70 = ask(services, model, "What fruit?", "No idea.", 4, 70)
    after_90 = ask(services, model, "What fruit?", "Pears.", 5, 90)
    assert "Topic 70: remember apples." not in conversation_texts(after_70.messages)
    assert conversation_texts(after_90.messages)[:2] == ["Topic 90: remember pears.", "Pears."]


def test_a_reminder_set_in_a_topic_fires_in_that_topic(
    services: TurnServices,
    model: ScriptedModel,
    reminders: InMemoryReminderStore,
    schedules: InMemorySchedules,
    telegram: InMemoryTelegram,
) -> None:
    model.responses += [
        tool_use(("set_reminder", {"text": "water the plants", "in_minutes": 30})),
        text_response("I will remind you."),
    ]
    drive_turn(services, turn_start(services, "remind me in 30 minutes", chat_id=USER, update_id=1, topic=70))
    (made,) = reminders.list(USER)
    assert (made.chat_id, made.topic) == (USER, 70)
    firing = FireServices(
        reminders=reminders,
        schedules=schedules,
        chats=services.stores.chats,
        sequencer=services.outbound.sequencer,
        clock=lambda: datetime(2026, 11, 23, 17, 0, 2, tzinfo=UTC),
    )
    event = FireEvent(
        user_id=USER, chat_id=USER, reminder_id=made.reminder_id, scheduled_time="2026-11-23T17:00:00Z"
    )
    assert fire(event, firing) == "started"
    (waiting,) = services.outbound.sequencer().inbox.pending(Conversation(USER, 70))
    assert (waiting.kind, waiting.topic) == (Fired(kind="reminder", reminder_id=made.reminder_id), 70)
    name = [n for n in services.outbound.sequencer().starter.started if n.startswith(f"chat{USER}t70-")]  # type: ignore[attr-defined]
    assert name, "the firing starts the topic's turn"
    assert services.outbound.sequencer().inbox.pending(Conversation(USER)) == []


def command(
    services: TurnServices, text: str, update_id: int, topic: int | None = None, chat_id: int = USER
) -> None:
    drive_turn(services, turn_start(services, text, chat_id=chat_id, update_id=update_id, topic=topic))


def test_new_opens_a_named_topic_and_answers_inside_it(
    services: TurnServices, telegram: InMemoryTelegram
) -> None:
    command(services, "/new Trip plans", 1)
    (created,) = telegram.calls_of("create_forum_topic")
    assert created == {"chat_id": USER, "name": "Trip plans"}
    ((_, thread),) = telegram.topics
    (answer,) = telegram.sent
    assert answer.message_thread_id == thread and "Trip plans" in answer.text
    kept = services.stores.messages.recent(Conversation(USER), 5)
    assert [m.content for m in kept] == ["/new Trip plans", "(Opened a new topic, “Trip plans”.)"]
    record = services.stores.chats.get(Conversation(USER, thread))
    assert record is None or not record.topic_unnamed, "the user named it"


def test_new_without_a_title_opens_new_chat_which_its_first_answer_renames_once(
    services: TurnServices, model: ScriptedModel, telegram: InMemoryTelegram
) -> None:
    command(services, "/new", 1)
    ((_, thread),) = telegram.topics
    assert telegram.topics[(USER, thread)] == "New chat"
    ask(services, model, "Can you help me plan a trip to Lisbon in May?", "Gladly.", 2, thread)
    assert telegram.calls_of("edit_forum_topic") == [
        {"chat_id": USER, "message_thread_id": thread, "name": "Help me plan a trip to"}
    ]
    ask(services, model, "Something else entirely now", "Sure.", 3, thread)
    assert len(telegram.calls_of("edit_forum_topic")) == 1, "renamed once"


def test_a_topic_telegram_named_is_renamed_after_its_first_answer_from_its_first_words(
    services: TurnServices, model: ScriptedModel, telegram: InMemoryTelegram
) -> None:
    services.stores.chats.set_topic_unnamed(Conversation(USER, 80), True)  # as the webhook notes it
    ask(services, model, "👍", "🙂", 1, 80)
    assert telegram.calls_of("edit_forum_topic") == [], "no words yet: the name waits for some"
    ask(services, model, "Groceries for the weekend", "Noted.", 2, 80)
    ask(services, model, "and more", "Ok.", 3, 80)
    assert telegram.calls_of("edit_forum_topic") == [
        {"chat_id": USER, "message_thread_id": 80, "name": "Groceries for the weekend"}
    ]
    ask(services, model, "A main-chat message", "Ok.", 4, None)
    assert len(telegram.calls_of("edit_forum_topic")) == 1, "the chat itself is never renamed"


def test_new_with_threaded_mode_off_says_how_to_turn_it_on_and_creates_nothing(
    services: TurnServices, telegram: InMemoryTelegram
) -> None:
    telegram.topics_enabled = False
    command(services, "/new Trip", 1)
    assert telegram.calls_of("create_forum_topic") == []
    (answer,) = telegram.sent
    assert answer.message_thread_id is None
    assert "@BotFather → the bot → Bot Settings → Threads Settings" in answer.text
    telegram.topics_enabled = True  # the owner turns it on: the next /new sees it at once
    command(services, "/new Trip", 2)
    assert len(telegram.calls_of("create_forum_topic")) == 1
    command(services, "/new Again", 3)
    assert len(telegram.calls_of("get_me")) == 2, "getMe is asked once it is on, then kept"


def test_a_retried_finish_opens_the_topic_once(services: TurnServices, telegram: InMemoryTelegram) -> None:
    start = turn_start(services, "/new Plans", chat_id=USER, update_id=1)
    load_context(LoadContextInput(turn=start.turn), services)
    telegram.fail_next("send_message", TelegramTransientError("sendMessage", 502, "Bad Gateway"))
    with pytest.raises(TelegramTransientError):  # the state machine retries FinishTurn
        finish_turn(FinishTurnInput(turn=start.turn), services)
    finish_turn(FinishTurnInput(turn=start.turn), services)
    assert len(telegram.calls_of("create_forum_topic")) == 1
    ((_, thread),) = telegram.topics
    assert [m.message_thread_id for m in telegram.sent] == [thread]


def test_a_topics_older_messages_get_a_rolling_summary_of_their_own() -> None:
    """The summarizer visits each due conversation: a topic's summary (and its vector) is the topic's, and
    the chat's own stays the chat's."""
    ids, index = itertools.count(1), InMemoryVectorIndex()
    services = SummarizeServices(
        chats=InMemoryChatStore(),
        messages=InMemoryMessageRepository(),
        memory=MemoryService(LocalHashEmbedder(), index, new_key=lambda: f"k{next(ids)}"),
        summarizer=ExtractiveSummarizer(),
        history_limit=4,
        threshold=3,
    )
    topic = Conversation(USER, 70)
    for where, about in ((topic, "Lisbon"), (Conversation(USER), "groceries")):
        for n in range(9):
            services.messages.add(
                StoredMessage(
                    id=f"m{where.topic}-{n}",
                    chat_id=USER,
                    topic=where.topic,
                    role="user" if n % 2 == 0 else "assistant",
                    content=f"message {n} about {about}",
                    created_at=f"2026-11-22T09:00:{n:02d}.000Z",
                )
            )
            services.chats.record_message(where, USER, 7)
    result = summarize_chats(SummarizeInput(), services)
    assert (result.visited, result.summarized) == (2, 2)
    in_topic, in_chat = services.chats.get(topic), services.chats.get(Conversation(USER))
    assert in_topic is not None and "Lisbon" in in_topic.summary and "groceries" not in in_topic.summary
    assert in_chat is not None and "groceries" in in_chat.summary and "Lisbon" not in in_chat.summary
    assert {summary_key(topic), summary_key(Conversation(USER))} == set(index.records)


def test_new_in_a_group_that_is_not_a_forum_opens_nothing_says_so_and_keeps_no_claim_of_one(
    services: TurnServices, telegram: InMemoryTelegram
) -> None:
    group = -100_555
    command(services, "/new Trip", 1, chat_id=group)
    assert telegram.topics == {}
    (answer,) = telegram.sent
    assert answer.chat_id == group and answer.message_thread_id is None
    assert answer.text == NOT_A_FORUM
    kept = services.stores.messages.recent(Conversation(group), 5)
    assert [m.content for m in kept] == ["/new Trip", NOT_A_FORUM], "the history says no topic was opened"

    telegram.forums.add(group)  # an admin turns Topics on: /new opens one there
    command(services, "/new Trip", 2, chat_id=group)
    ((chat, thread),) = telegram.topics
    assert chat == group and telegram.sent[-1].message_thread_id == thread
