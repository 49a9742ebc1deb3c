"""A reminder's schedule fires: one message per occurrence, answered in its own turn with its text."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from support.turn_fakes import ScriptedModel, text_response, turn_start

from stepwise.reminders.firing import FireServices, fire
from stepwise.reminders.models import FireEvent, Reminder
from stepwise.services import TurnServices
from stepwise.states.call_model import call_model
from stepwise.states.contracts.call_model import CallModelInput
from stepwise.states.load_context import load_context
from stepwise.telegram.conversation import Conversation
from stepwise.turn.ref import TurnRef
from stepwise.turn.start import TurnStart
from stepwise.turn_records.models import Chat
from stepwise_local.in_memory.reminders import InMemoryReminderStore, InMemorySchedules

USER = 7
FIRED = "2026-11-23T17:00:00Z"


def reminder(reminders: InMemoryReminderStore, *, checkin: bool = False, one_time: bool = True) -> Reminder:
    made = Reminder(
        user_id=USER,
        chat_id=USER,
        reminder_id=reminders.allocate_id(USER),
        text="send me my open tasks" if checkin else "call mom",
        checkin=checkin,
        expression="at(2026-11-23T17:00:00)" if one_time else "cron(0 8 * * ? *)",
        timezone="UTC",
        when="today",
        one_time=one_time,
        created_at="2026-11-23T12:00:00.000Z",
    )
    reminders.put(made)
    return made


@pytest.fixture
def firing(
    services: TurnServices, reminders: InMemoryReminderStore, schedules: InMemorySchedules
) -> FireServices:
    return FireServices(
        reminders=reminders,
        schedules=schedules,
        chats=services.stores.chats,
        sequencer=services.outbound.sequencer,
        clock=lambda: datetime(2026, 11, 23, 17, 0, 2, tzinfo=UTC),
    )


def event(made: Reminder, scheduled_time: str = FIRED) -> FireEvent:
    return FireEvent(user_id=USER, chat_id=USER, reminder_id=made.reminder_id, scheduled_time=scheduled_time)


def started(services: TurnServices) -> list[str]:
    return list(services.outbound.sequencer().starter.started)  # type: ignore[attr-defined]


def test_a_schedule_delivered_twice_queues_one_message_and_starts_one_turn(
    services: TurnServices, reminders: InMemoryReminderStore, firing: FireServices
) -> None:
    made = reminder(reminders, one_time=False)
    assert fire(event(made), firing) == "started"
    assert fire(event(made), firing) == "queued", "the same message, still waiting: found, not added"
    assert (
        len(started(services)) == 1
        and len(services.outbound.sequencer().inbox.pending(Conversation(USER))) == 1
    )
    assert fire(event(made, "2026-11-24T08:00:00Z"), firing) == "queued", (
        "the next occurrence is another message"
    )


def test_a_fired_one_time_reminder_is_no_longer_listed(
    reminders: InMemoryReminderStore, firing: FireServices
) -> None:
    made = reminder(reminders)
    assert fire(event(made), firing) == "started"
    assert reminders.list(USER) == []
    assert fire(event(made), firing) == "cancelled", (
        "a late second delivery finds no record and sends nothing"
    )


def test_a_cancelled_reminder_sends_nothing_and_its_schedule_goes(
    services: TurnServices,
    reminders: InMemoryReminderStore,
    schedules: InMemorySchedules,
    firing: FireServices,
) -> None:
    made = reminder(reminders, one_time=False)
    reminders.delete(USER, made.reminder_id)
    assert fire(event(made), firing) == "cancelled"
    assert started(services) == [] and schedules.deleted == ["u7-r1"]


def test_recurring_check_ins_pause_while_the_user_is_away_and_resume_when_they_write(
    services: TurnServices, reminders: InMemoryReminderStore, firing: FireServices
) -> None:
    made = reminder(reminders, checkin=True, one_time=False)
    services.stores.chats.record_message(Conversation(USER), USER, 100, written_at="2026-11-20T09:00:00.000Z")
    assert fire(event(made), firing) == "paused"
    services.stores.chats.record_message(Conversation(USER), USER, 100, written_at="2026-11-23T16:00:00.000Z")
    assert fire(event(made), firing) == "started"


def test_the_reminder_turn_answers_with_the_text_and_no_model_call(
    services: TurnServices, reminders: InMemoryReminderStore, firing: FireServices, model: ScriptedModel
) -> None:
    fire(event(reminder(reminders)), firing)
    (name,) = started(services)
    start = TurnStart.model_validate(services.outbound.sequencer().starter.started[name])  # type: ignore[attr-defined]
    output = load_context(start, services)
    assert output.route == "reply" and model.requests == []
    assert services.stores.turns.get_reply(start.turn.turn_id).text == "⏰ Reminder: call mom"
    (stored,) = services.stores.messages.recent(Conversation(USER), 10)
    assert stored.content == "(Reminder #1, set by the user earlier, is due: call mom)"


def test_a_check_in_runs_its_instruction_through_the_model(
    services: TurnServices, reminders: InMemoryReminderStore, firing: FireServices, model: ScriptedModel
) -> None:
    services.stores.chats.record_message(Conversation(USER), USER, 100, written_at="2026-11-23T16:00:00.000Z")
    fire(event(reminder(reminders, checkin=True, one_time=False)), firing)
    (name,) = started(services)
    start = TurnStart.model_validate(services.outbound.sequencer().starter.started[name])  # type: ignore[attr-defined]
    load_context(start, services)
    model.responses.append(text_response("You have 2 open tasks."))
    call_model(CallModelInput(turn=start.turn), services)
    (request,) = model.requests
    assert "Carry it out now: send me my open tasks" in str(request.messages[-1]["content"])


def test_a_reminder_is_its_own_turn_after_what_the_user_sent(
    services: TurnServices, reminders: InMemoryReminderStore, firing: FireServices
) -> None:
    begin = turn_start(services, "hello", chat_id=USER)
    fire(event(reminder(reminders)), firing)  # queued behind the user's message
    load_context(begin, services)
    meta = services.stores.turns.get_meta(begin.turn.turn_id)
    assert meta.kind == Chat()
    pending = services.outbound.sequencer().inbox.pending(Conversation(USER))
    assert [(m.kind.kind, m.status) for m in pending] == [("message", "taken"), ("reminder", "queued")]


def test_the_user_time_zone_reaches_the_prompt(
    services: TurnServices, reminders: InMemoryReminderStore, model: ScriptedModel
) -> None:
    reminders.set_timezone(USER, "Asia/Tokyo")
    begin = turn_start(services, "what time is it?", chat_id=USER)
    load_context(begin, services)
    model.responses.append(text_response("late"))
    call_model(CallModelInput(turn=TurnRef(**begin.turn.model_dump())), services)
    assert "+09:00" in str(model.requests[0].messages[-1]["content"])


def test_until_the_user_sets_a_zone_the_model_is_told_to_ask_when_it_matters(
    services: TurnServices, reminders: InMemoryReminderStore, model: ScriptedModel
) -> None:
    for update_id, chosen in ((1, None), (2, "Europe/Lisbon")):
        if chosen:
            reminders.set_timezone(USER, chosen)
        begin = turn_start(services, "remind me at 5pm", chat_id=USER, update_id=update_id)
        load_context(begin, services)
        model.responses.append(text_response("ok"))
        call_model(CallModelInput(turn=begin.turn), services)
    first, second = (str(request.messages[-1]["content"]) for request in model.requests)
    assert "has not set a time zone; times are in UTC" in first
    assert "has not set a time zone" not in second and "+00:00" in second  # Lisbon is UTC+0 in November
