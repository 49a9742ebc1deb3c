"""The offline model's answers to what its commands miss (issue 31): tasks named by their words, near-miss
commands, "forget <words>", text it does not understand, "remind me to …" without a time, and a weekday word
typed on that weekday. The phrase corpora score the phrasings; these tests pin the answers' shape."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from support.offline_requests import offline_request, on_a_list, with_results

from stepwise.offline.api import COMMAND_EXAMPLES, OfflineModel, closest_commands, parse_intent
from stepwise.prompt.clock_line import UserClock

LISBON = ZoneInfo("Europe/Lisbon")


def words(response: Any) -> str:
    return " ".join(block.get("text", "") for block in response.content if block.get("type") == "text")


def calls(response: Any) -> list[tuple[str, dict[str, Any]]]:
    return [(block["name"], block["input"]) for block in response.tool_uses]


def test_a_task_named_by_its_words_is_completed_after_reading_the_open_tasks() -> None:
    first, second = on_a_list("done buy milk", ["buy oat milk", "buy milk"])
    assert calls(first) == [("list_tasks", {"status": "pending"})]
    assert second is not None and calls(second) == [("complete_task", {"task_id": 2})]  # the exact title wins


def test_a_deletion_by_words_reads_every_task_and_asks_for_the_tap_as_a_deletion_by_number_does() -> None:
    first, second = on_a_list("delete the dentist task", ["buy milk", "book the dentist"])
    assert calls(first) == [("list_tasks", {"status": "all"})]
    # delete_task is the call that needs approval: the turn asks for the tap before it runs
    assert second is not None and calls(second) == [("delete_task", {"task_id": 2})]


def test_several_tasks_that_match_are_listed_with_the_command_that_picks_one() -> None:
    _, second = on_a_list("mark milk as done", ["buy milk", "call mom", "buy oat milk"])
    assert second is not None and calls(second) == []
    assert words(second) == (
        "Which one? 2 open tasks match “milk”:\n#1 [ ] buy milk\n#3 [ ] buy oat milk\n"
        "Send *done* with its number, like *done 1*."
    )


def test_no_task_that_matches_is_said_plainly() -> None:
    _, second = on_a_list("delete the gym task", ["buy milk"])
    assert second is not None and calls(second) == []
    assert words(second) == "No task on your list matches “gym”. Send *list* to see your tasks."


@pytest.mark.parametrize(
    "text",
    [
        "remove the background",
        "check the weather",
        "I'm done",
        "well done",
        "done",
        "delete everything",
        "mark as done",
        "is it done?",
        "almost done",
    ],
)
def test_texts_that_name_no_task_are_not_looked_up(text: str) -> None:
    assert parse_intent(text) != [("list_tasks", {"status": "pending"})]
    assert parse_intent(text) != [("list_tasks", {"status": "all"})]


def test_the_fallback_sees_a_task_named_by_its_words_as_a_command_the_rules_understand() -> None:
    assert parse_intent("done buy milk") == [("list_tasks", {"status": "pending"})]


@pytest.mark.parametrize(
    ("text", "answer"),
    [
        ("ad buy bred", "Did you mean “add buy bred”? Send that and I'll add the task “buy bred”."),
        ("lst", "Did you mean “list”? Send that and I'll list your tasks."),
        (
            "remnd me at 5pm to call mom",
            "Did you mean “remind me at 5pm to call mom”? Send that and I'll set a reminder: “call mom”.",
        ),
        ("hlep", "Did you mean “help”? Send that and I'll show the commands I know offline."),
    ],
)
def test_a_near_miss_is_answered_with_the_command_it_would_run_and_nothing_is_done(
    text: str, answer: str
) -> None:
    response = OfflineModel().complete(offline_request(text))
    assert calls(response) == [] and words(response) == answer


def test_forget_with_words_points_to_the_memory_and_the_command_that_forgets_it() -> None:
    request = offline_request("forget the birthday")
    first = OfflineModel().complete(request)
    assert calls(first) == [("recall", {"query": "birthday"})]
    recalled = (
        "[summary-1001] - Said: it's mom's birthday soon\n[fact-abc123] Mom's birthday is on 3 May\n"
        "[fact-def456] I take my coffee black"
    )
    result = {
        "type": "tool_result",
        "tool_use_id": first.tool_uses[0]["id"],
        "content": recalled,
        "is_error": False,
    }
    second = OfflineModel().complete(with_results(request, first, [result]))
    assert calls(second) == []  # forgetting is for good: the user sends the command, then taps
    assert words(second) == (
        "This is the memory I would forget: “Mom's birthday is on 3 May” (fact-abc123). To forget it, send "
        "*forget fact-abc123* (you approve it with a tap); nothing is forgotten until then."
    )


@pytest.mark.parametrize("text", ["forget it", "forget that", "forget everything"])
def test_forget_it_is_no_memory(text: str) -> None:
    assert parse_intent(text) is None


def test_text_it_does_not_understand_gets_one_line_with_the_closest_commands_not_all_of_them() -> None:
    answer = words(OfflineModel().complete(offline_request("what should I cook tonight with leeks")))
    assert answer.startswith("I'm in offline mode (no model API is configured), so I didn't understand that.")
    assert "\n" not in answer and len(answer) < 250
    offered = answer.split("Closest commands: ")[1].removesuffix(" (“help” lists them all).").split(" · ")
    assert len(offered) == 3 and all(example in COMMAND_EXAMPLES_SHORT for example in offered), offered
    assert "Offline I understand" not in answer and "Did you mean" not in answer


COMMAND_EXAMPLES_SHORT = {example.split(" (")[0] for example in COMMAND_EXAMPLES}


@pytest.mark.parametrize(
    ("text", "first"),
    [
        ("delete the thing", "*delete* 3"),
        ("finished 3", "*done* 3"),
        ("remind mom tomorrow", "*remind me to* call mom"),
        ("cancel it", "*cancel reminder* 2"),
        ("show me everything", "*show task* 2"),
    ],
)
def test_the_commands_offered_are_the_closest_by_similarity_one_per_command(text: str, first: str) -> None:
    offered = closest_commands(text, COMMAND_EXAMPLES)
    assert offered[0] == first
    assert len(offered) == 3
    command_words = [example.split("*")[1].split()[0] for example in offered]
    assert len(set(command_words)) == 3, "one example per command"
    assert not any("(" in example for example in offered), "without their asides"


def test_nothing_to_compare_still_offers_three_commands_and_a_long_text_is_cut() -> None:
    assert len(closest_commands("", COMMAND_EXAMPLES)) == 3
    assert len(closest_commands("🙂 " + "x" * 10_000, COMMAND_EXAMPLES)) == 3


def test_remind_me_without_a_time_adds_a_task_and_says_how_to_give_one() -> None:
    request = offline_request("remind me to call mom")
    first = OfflineModel().complete(request)
    assert calls(first) == [("add_task", {"title": "call mom"})]
    result = {
        "type": "tool_result",
        "tool_use_id": first.tool_uses[0]["id"],
        "content": "Added task #1: call mom",
        "is_error": False,
    }
    assert words(OfflineModel().complete(with_results(request, first, [result]))) == (
        "Added task #1: call mom\nA reminder needs a time, so I added it as a task. To be reminded, say "
        "when: “remind me at 5pm to call mom” or “remind me in 20 minutes to call mom”."
    )


DAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]


@pytest.mark.parametrize("day", range(7))
def test_a_weekday_word_typed_on_that_weekday_is_today_and_next_makes_it_a_week_on(day: int) -> None:
    # An afternoon on that weekday (2026-11-23 is a Monday), after the 09:00 a date without a time stands for
    now = datetime(2026, 11, 23, 15, 30, tzinfo=LISBON) + timedelta(days=day)
    clock, name, today = UserClock(now, "Europe/Lisbon"), DAYS[day], now.date()
    for text in (f"add pay rent by {name}", f"add pay rent on {name}", f"add pay rent {name}"):
        assert parse_intent(text, clock) == [("add_task", {"title": "pay rent", "due": today.isoformat()})]
    week_on = (today + timedelta(days=7)).isoformat()
    assert parse_intent(f"add pay rent next {name}", clock) == [
        ("add_task", {"title": "pay rent", "due": week_on})
    ]


def test_a_day_of_the_month_typed_on_that_day_is_today_and_a_time_already_past_still_moves_on() -> None:
    friday = UserClock(datetime(2026, 11, 27, 15, 30, tzinfo=LISBON), "Europe/Lisbon")
    assert parse_intent("add pay rent by the 27th", friday) == [
        ("add_task", {"title": "pay rent", "due": "2026-11-27"})
    ]
    # with a time of day that has passed, the day is the next one, as for reminders
    assert parse_intent("add pay rent by friday at 10am", friday) == [
        ("add_task", {"title": "pay rent", "due": "2026-12-04T10:00"})
    ]
    assert parse_intent("remind me next friday at 5pm to pay rent", friday) == [
        ("set_reminder", {"text": "pay rent", "checkin": False, "at": "2026-12-04T17:00"})
    ]
