"""The offline model's reminder intents: the user's clock, snoozing, the tools on offer, and its replies."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from support.offline_requests import LISBON_NOW, catalog_tools, offline_request
from support.turn_fakes import turn_start

from stepwise.model.types import ModelRequest
from stepwise.offline.api import OfflineModel, parse_intent
from stepwise.prompt.clock_line import UserClock
from stepwise.services import TurnServices
from stepwise.states.contracts.fallback import FallbackInput
from stepwise.states.fallback import use_fallback
from stepwise.states.load_context import load_context

LISBON = UserClock(LISBON_NOW, "Europe/Lisbon")
LONGEST_REMINDER = 1000  # characters: the reminder grammar takes a longer message for no reminder


def calls(request: ModelRequest, model: OfflineModel | None = None) -> list[tuple[str, dict[str, Any]]]:
    response = (model or OfflineModel()).complete(request)
    return [(block["name"], block["input"]) for block in response.tool_uses]


def reminder_at(text: str, when: str) -> list[tuple[str, dict[str, Any]]]:
    return [("set_reminder", {"text": text, "checkin": False, "at": when})]


@pytest.mark.parametrize(
    ("text", "understood"),
    [
        ("remind me in 20 minutes to stretch", True),
        ("list my reminders", True),
        ("I forgot to remind him", False),
    ],
)
def test_reminder_commands_are_commands_the_fallback_can_take_over(
    services: TurnServices, text: str, understood: bool
) -> None:
    assert (parse_intent(text) is not None) is understood
    begin = turn_start(services, text)
    load_context(begin, services)
    assert (use_fallback(FallbackInput(turn=begin.turn), services).route == "model") is understood


def test_a_time_of_day_that_has_passed_today_means_tomorrow() -> None:
    evening = UserClock(datetime(2026, 11, 23, 18, 0, tzinfo=ZoneInfo("Europe/Lisbon")), "Europe/Lisbon")
    assert parse_intent("remind me at 5pm to call mom", evening) == reminder_at(
        "call mom", "2026-11-24T17:00"
    )
    assert parse_intent("remind me at 7pm to call mom", evening) == reminder_at(
        "call mom", "2026-11-23T19:00"
    )


def test_times_are_the_users_local_times_from_the_context() -> None:
    tokyo = datetime(2026, 11, 23, 14, 5, tzinfo=UTC).astimezone(ZoneInfo("Asia/Tokyo"))  # 23:05 there
    assert calls(offline_request("remind me at 5pm to call mom", now=tokyo)) == reminder_at(
        "call mom", "2026-11-24T17:00"
    )
    assert calls(offline_request("remind me at 11:30pm to sleep", now=tokyo)) == reminder_at(
        "sleep", "2026-11-23T23:30"
    )


def test_without_a_clock_line_the_rules_use_utc_by_the_models_clock() -> None:
    model = OfflineModel(clock=lambda: datetime(2026, 11, 23, 18, 0, tzinfo=UTC))
    request = offline_request("remind me at 5pm to call mom")
    bare = request._replace(
        messages=[{"role": "user", "content": [{"type": "text", "text": "remind me at 5pm to call mom"}]}],
    )
    assert calls(bare, model) == reminder_at("call mom", "2026-11-24T17:00")


def test_american_zones_read_numeric_dates_month_first() -> None:
    new_york = UserClock(LISBON_NOW.astimezone(ZoneInfo("America/New_York")), "America/New_York")
    assert parse_intent("remind me on 3/4 to file taxes", new_york) == reminder_at(
        "file taxes", "2027-03-04T09:00"
    )
    assert parse_intent("remind me on 3/4 to file taxes", LISBON) == reminder_at(
        "file taxes", "2027-04-03T09:00"
    )


def test_numbers_out_of_the_tools_range_reach_the_tool_which_says_so() -> None:
    zero = parse_intent("remind me in 0 minutes to test", LISBON)
    assert zero == [("set_reminder", {"text": "test", "checkin": False, "in_minutes": 0})]
    far = parse_intent("remind me in 400 days to renew", LISBON)
    assert far == [("set_reminder", {"text": "renew", "checkin": False, "in_minutes": 400 * 1440})]


def test_impossible_times_and_long_messages_are_no_reminders() -> None:
    assert parse_intent("remind me at 25:00 to call mom", LISBON) is None
    assert parse_intent("remind me on feb 30 to call mom", LISBON) is None
    assert parse_intent("remind me at 5pm to " + "x" * LONGEST_REMINDER, LISBON) is None


def test_a_long_run_of_time_words_is_answered_quickly() -> None:
    started = time.perf_counter()
    for text in (
        "every day " * 98 + "x",
        "remind me " + "at 5 " * 190,
        "tomorrow, " * 99,
        "in 2 hours " * 90,
    ):
        parse_intent(text[:LONGEST_REMINDER], LISBON)
    assert time.perf_counter() - started < 1.0


def test_snooze_sets_the_reminder_just_sent_again() -> None:
    history = [
        {"role": "user", "content": [{"type": "text", "text": "remind me at 5pm to call mom"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "I'll remind you at 17:00."}]},
        {"role": "assistant", "content": [{"type": "text", "text": "⏰ Reminder: call mom"}]},
    ]
    snoozed = [("set_reminder", {"text": "call mom", "checkin": False, "in_minutes": 10})]
    assert calls(offline_request("snooze 10 minutes", history=history)) == snoozed
    assert calls(offline_request("Snooze", history=history)) == snoozed
    unknown = [("set_reminder", {"text": "snoozed reminder", "checkin": False, "in_minutes": 15})]
    assert calls(offline_request("remind me again in 15 minutes")) == unknown


def test_snooze_reads_the_reminder_just_sent_within_a_text_and_only_from_the_assistant() -> None:
    sent = [
        {
            "role": "assistant",
            "content": [{"type": "text", "text": "Hi\n⏰ Reminder: stretch\n(from your list)"}],
        }
    ]
    assert calls(offline_request("snooze", history=sent)) == [
        ("set_reminder", {"text": "stretch", "checkin": False, "in_minutes": 10})
    ]
    typed = [{"role": "user", "content": [{"type": "text", "text": "⏰ Reminder: not from the assistant"}]}]
    assert calls(offline_request("snooze", history=typed)) == [
        ("set_reminder", {"text": "snoozed reminder", "checkin": False, "in_minutes": 10})
    ]


def test_without_the_reminder_tools_remind_me_stays_a_task() -> None:
    request = offline_request("remind me to call mom at 5pm", tools=catalog_tools(reminders=False))
    assert calls(request) == [("add_task", {"title": "call mom at 5pm"})]
    assert calls(offline_request("remind me in 20 minutes to stretch", tools=[])) == []


def test_with_tools_disabled_it_answers_in_words() -> None:
    request = offline_request("remind me at 5pm to call mom")._replace(tool_choice={"type": "none"})
    response = OfflineModel().complete(request)
    assert response.stop_reason == "end_turn" and not response.tool_uses


def test_the_time_is_told_in_the_users_zone() -> None:
    response = OfflineModel().complete(offline_request("what time is it?"))
    assert response.content[0]["text"] == "It is 14:05 on Monday, 23 November 2026 (Europe/Lisbon)."


def reply_to(text: str, name: str, result: str, is_error: bool) -> str:
    """The offline model's words for one tool result, in the conversation that asked for it."""
    first = offline_request(text)
    tool_use = {"type": "tool_use", "id": "toolu_1", "name": name, "input": {}}
    outcome = {"type": "tool_result", "tool_use_id": "toolu_1", "content": result, "is_error": is_error}
    messages = [
        *first.messages,
        {"role": "assistant", "content": [tool_use]},
        {"role": "user", "content": [outcome]},
    ]
    response = OfflineModel().complete(first._replace(messages=messages))
    assert response.stop_reason == "end_turn"
    return str(response.content[0]["text"])


def test_tool_results_pass_through_and_errors_are_explained() -> None:
    done = "I'll remind you on Monday 23 November at 17:00 (Europe/Lisbon): call mom. (reminder #4)"
    assert reply_to("remind me at 5pm to call mom", "set_reminder", done, False) == done
    past = reply_to(
        "remind me today at 9am to stretch", "set_reminder", "That time has already passed.", True
    )
    assert past == "⚠️ I couldn't set that reminder: That time has already passed."
    zone = reply_to("/timezone Lisbon", "set_timezone", "Unknown time zone: Lisbon.", True)
    assert zone.startswith("⚠️ I couldn't change your time zone: Unknown time zone: Lisbon.\n")
    assert "Europe/Lisbon" in zone
    assert reply_to("cancel reminder 9", "cancel_reminder", "", True) == "⚠️ I couldn't cancel that reminder."
    assert (
        reply_to("done 9", "complete_task", "There is no task #9.", True)
        == "⚠️ There's no task #9 on your list."
    )
