"""Due dates from the offline model end to end: "add buy milk tomorrow", late in the evening in the user's
zone, through the real state machine, adds "buy milk" due the user's tomorrow, which the list then shows."""

from __future__ import annotations

from datetime import timedelta
from zoneinfo import ZoneInfo

from support.stack import Stack

OFFLINE = {"ANTHROPIC_BASE_URL": "", "ANTHROPIC_API_KEY_PARAMETER": ""}
NEW_YORK = ZoneInfo("America/New_York")


def test_add_buy_milk_tomorrow_late_at_night_is_due_the_users_tomorrow(clock_stack: Stack) -> None:
    # Given the offline model, a user in New York, and 23:50 there (already the next day in UTC), days ahead
    # of the host's clock (so that neither UTC's tomorrow nor the host's is the user's)
    stack, user = clock_stack, clock_stack.new_user()
    stack.emulation.config.env.update(OFFLINE)
    assert stack.say(user, "/timezone America/New_York")["status"] == "SUCCEEDED"
    local = stack.emulation.now().astimezone(NEW_YORK)
    late = local.replace(hour=23, minute=50, second=0, microsecond=0) + timedelta(days=3)
    stack.emulation.advance_clock(late - local)
    assert stack.emulation.now().astimezone(NEW_YORK).date() != stack.emulation.now().date()
    tomorrow = (late.date() + timedelta(days=1)).isoformat()
    # When they add a task for tomorrow
    assert stack.say(user, "add buy milk tomorrow")["status"] == "SUCCEEDED"
    # Then the task is "buy milk", due their tomorrow, and the reply and the list say so
    (task,) = stack.tasks(user)
    assert (task["title"], task["due"]) == ("buy milk", tomorrow)
    assert stack.replies(user)[-1] == f"Added task #1: buy milk (due {tomorrow})"
    assert stack.say(user, "/tasks")["status"] == "SUCCEEDED"
    assert f"buy milk (due {tomorrow})" in stack.replies(user)[-1]
