"""Due dates in the offline model's task commands ("add buy milk tomorrow"), on the user's own clock, and the
emoji around a command that it ignores."""

from __future__ import annotations

from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from support.offline_requests import offline_request

from stepwise.offline.api import OfflineModel, parse_intent
from stepwise.prompt.clock_line import UserClock

# Thursday 2026-12-31, 23:50 in New York: already Friday 2027-01-01 04:50 in UTC.
NEW_YORK = UserClock(datetime(2026, 12, 31, 23, 50, tzinfo=ZoneInfo("America/New_York")), "America/New_York")
# Monday 2026-11-23, 00:10 in Auckland: still Sunday 2026-11-22 11:10 in UTC.
AUCKLAND = UserClock(datetime(2026, 11, 23, 0, 10, tzinfo=ZoneInfo("Pacific/Auckland")), "Pacific/Auckland")

Calls = list[tuple[str, dict[str, Any]]]


def added(title: str, due: str | None = None) -> Calls:
    return [("add_task", {"title": title, **({"due": due} if due else {})})]


@pytest.mark.parametrize(
    ("text", "new_york", "auckland"),
    [
        ("add buy milk tomorrow", "2027-01-01", "2026-11-24"),
        ("add buy milk on friday", "2027-01-01", "2026-11-27"),
        ("add buy milk next week", "2027-01-04", "2026-11-30"),  # its Monday
        ("add buy milk by the 3rd", "2027-01-03", "2026-12-03"),
        ("add buy milk 2026-12-03", "2026-12-03", "2026-12-03"),  # an explicit date stays as said
        ("add buy milk today", "2026-12-31", "2026-11-23"),
        ("add buy milk in 2 days", "2027-01-02", "2026-11-25"),
        ("add buy milk due dec 24", "2027-12-24", "2026-12-24"),  # a date without a year: its next one
        ("add buy milk tomorrow at 9", "2027-01-01T09:00", "2026-11-24T09:00"),
        ("add buy milk by friday evening", "2027-01-01T19:00", "2026-11-27T19:00"),
    ],
)
def test_a_date_ending_a_new_task_is_its_due_date_on_the_users_own_day(
    text: str, new_york: str, auckland: str
) -> None:
    assert parse_intent(text, NEW_YORK) == added("buy milk", new_york)
    assert parse_intent(text, AUCKLAND) == added("buy milk", auckland)


def test_the_offline_model_reads_the_day_from_the_clock_line_of_the_turn() -> None:
    response = OfflineModel().complete(offline_request("add buy milk tomorrow", NEW_YORK.now))
    assert [(block["name"], block["input"]) for block in response.tool_uses] == added(
        "buy milk", "2027-01-01"
    )


def test_a_day_and_month_follow_the_users_zone() -> None:
    lisbon = UserClock(datetime(2026, 11, 23, 23, 55, tzinfo=ZoneInfo("Europe/Lisbon")), "Europe/Lisbon")
    assert parse_intent("add file taxes by 3/4", lisbon) == added("file taxes", "2027-04-03")
    assert parse_intent("add file taxes by 3/4", NEW_YORK) == added("file taxes", "2027-03-04")


@pytest.mark.parametrize(
    ("text", "title"),
    [
        ("add read tomorrow's news", "read tomorrow's news"),  # a date inside the title
        ("add plan for tomorrow", "plan for tomorrow"),  # what the task is about
        ("add move the call to friday", "move the call to friday"),
        ("add call mom at 5pm", "call mom at 5pm"),  # a time of day alone: no guess at the day
        ("add stretch in 20 minutes", "stretch in 20 minutes"),
        ("add water the plants every friday", "water the plants every friday"),  # a task has one due date
        ("add 'buy milk tomorrow'", "buy milk tomorrow"),  # quoted: word for word
        ("add tomorrow", "tomorrow"),  # a title keeps a word
        ("add by tomorrow", "by tomorrow"),
        ("add pay rent by 2026-02-30", "pay rent by 2026-02-30"),  # no such day
        ("add pay rent on the 32nd", "pay rent on the 32nd"),
    ],
)
def test_a_date_that_belongs_to_the_title_or_names_no_single_day_stays_in_it(text: str, title: str) -> None:
    assert parse_intent(text, AUCKLAND) == added(title)


def test_every_item_added_to_a_list_for_a_day_is_due_that_day() -> None:
    assert parse_intent("put milk, eggs and bread on my shopping list for tomorrow", AUCKLAND) == [
        ("add_task", {"title": item, "due": "2026-11-24"}) for item in ("milk", "eggs", "bread")
    ]
    assert parse_intent("add batteries to my list by friday", AUCKLAND) == added("batteries", "2026-11-27")


def test_everyday_phrasings_of_a_new_task_take_dates_too() -> None:
    assert parse_intent("I need to buy a gift by saturday", AUCKLAND) == added("buy a gift", "2026-11-28")
    assert parse_intent("todo: renew passport due 2026-12-03", AUCKLAND) == added(
        "renew passport", "2026-12-03"
    )
    assert parse_intent("please add call mom tomorrow, thanks", AUCKLAND) == added("call mom", "2026-11-24")


def test_what_is_not_a_new_task_keeps_its_date_words() -> None:
    assert parse_intent("change task 3 to call the bank on monday", AUCKLAND) == [
        ("update_task", {"task_id": 3, "title": "call the bank on monday"})
    ]
    assert parse_intent("I have to go tomorrow", AUCKLAND) is None
    assert parse_intent("tomorrow is another day", AUCKLAND) is None
    # a reminder stays a reminder, and "next week" is a date for reminders as well
    assert parse_intent("remind me to call mom tomorrow", AUCKLAND) == [
        ("set_reminder", {"text": "call mom", "checkin": False, "at": "2026-11-24T09:00"})
    ]
    assert parse_intent("remind me next week to call mom", NEW_YORK) == [
        ("set_reminder", {"text": "call mom", "checkin": False, "at": "2027-01-04T09:00"})
    ]


@pytest.mark.parametrize(
    ("text", "calls"),
    [
        ("✅ done with 2!", [("complete_task", {"task_id": 2})]),
        ("pls add milk 🥛", added("milk")),
        ("🗑️ delete 4", [("delete_task", {"task_id": 4})]),  # with its variation selector
        ("done 1 👍🏽", [("complete_task", {"task_id": 1})]),  # with a skin tone
        ("add milk 🥛 and bread", added("milk 🥛 and bread")),  # inside the words: kept
        (
            "⏰ remind me at 5pm to call mom ⏰",
            [("set_reminder", {"text": "call mom", "checkin": False, "at": "2026-11-23T17:00"})],
        ),
        ("✅👍", None),
    ],
)
def test_emoji_around_a_message_are_ignored_and_those_inside_kept(text: str, calls: Calls | None) -> None:
    assert parse_intent(text, AUCKLAND) == calls
