"""Slash commands on the in-memory stack (support.memory_stack): each is answered by FinishTurn and stored
like any reply, and none of them sends a request to the model. The emulated stack keeps one wiring test of a
command's path through the real state machine (tests/integration/test_commands.py)."""

from __future__ import annotations

import pytest
from support.memory_stack import MemoryStack

from stepwise.commands.table import COMMANDS
from stepwise_local.anthropic_server import text, tool_use

MENU = [f"/{c.name}" for c in COMMANDS if c.in_menu]


def answer(stack: MemoryStack, user: int, command: str) -> str:
    """Send a command; its turn succeeds without a model request; returns the user's newest message."""
    before = len(stack.anthropic.requests)
    execution = stack.say(user, command)
    assert execution["status"] == "SUCCEEDED"
    assert len(stack.anthropic.requests) == before, "a command must not reach the model"
    return stack.replies(user)[-1]


@pytest.mark.parametrize("command", ["/help", "/HELP", "/help@StepwiseBot", "  /help  "])
def test_help_lists_every_command_of_the_menu(stack: MemoryStack, command: str) -> None:
    user = stack.new_user()
    reply = answer(stack, user, command)
    assert all(name in reply for name in MENU)


def test_start_says_what_stepwise_can_do_and_is_stored_like_any_reply(stack: MemoryStack) -> None:
    user = stack.new_user()
    reply = answer(stack, user, "/start")
    assert "tasks" in reply and "remind me" in reply and "/help" in reply
    stored = stack.stored(user)
    assert [m["role"] for m in stored] == ["user", "assistant"]
    assert stored[0]["content"] == "/start" and "remind me at 5pm" in stored[1]["content"]


def test_tasks_lists_the_users_tasks_without_the_model(stack: MemoryStack) -> None:
    user = stack.new_user()
    assert "no tasks" in answer(stack, user, "/tasks")
    stack.anthropic.script(tool_use(("add_task", {"title": "buy milk"})), text("Added."))
    stack.say(user, "add buy milk")
    assert answer(stack, user, "/tasks") == "1 task:\n#1 [ ] buy milk"


def test_reminders_lists_the_users_reminders_without_the_model(stack: MemoryStack) -> None:
    user = stack.new_user()
    assert "no reminders" in answer(stack, user, "/reminders")
    stack.anthropic.script(
        tool_use(("set_reminder", {"text": "water the plants", "in_minutes": 90})), text("Set.")
    )
    stack.say(user, "remind me in 90 minutes to water the plants")
    reply = answer(stack, user, "/reminders")
    assert reply.startswith("1 reminder:") and "water the plants" in reply


def test_memory_shows_what_was_remembered_about_the_user_only(stack: MemoryStack) -> None:
    user, other = stack.new_user(), stack.new_user()
    assert "don't remember anything" in answer(stack, user, "/memory")
    stack.anthropic.script(tool_use(("remember", {"fact": "I take my coffee black"})), text("Noted."))
    stack.say(user, "remember that I take my coffee black")
    reply = answer(stack, user, "/memory")
    assert reply.startswith("What I remember about you (1):") and "I take my coffee black" in reply
    assert "coffee" not in answer(stack, other, "/memory")


def test_usage_shows_todays_and_this_months_tokens_and_cost(stack: MemoryStack) -> None:
    user = stack.new_user()
    today, month, cap = answer(stack, user, "/usage").splitlines()[1:]
    assert (today, month) == ("today: no tokens, $0", "this month: no tokens, $0")
    assert cap.startswith("daily budget: 0 of 1,000,000 tokens (0%), resets at midnight UTC, in "), (
        "the default cap"
    )
    stack.say(user, "hello")  # one model call, counted
    today = answer(stack, user, "/usage").splitlines()[1]
    assert today.startswith("today: ") and "tokens (in " in today and "$" in today


def test_timezone_without_a_zone_shows_the_users_zone(stack: MemoryStack) -> None:
    reply = answer(stack, stack.new_user(), "/timezone")
    assert "You have not set a time zone" in reply and "/timezone Europe/Lisbon" in reply


def test_timezone_with_a_zone_sets_it_through_the_rules_without_the_model(stack: MemoryStack) -> None:
    user = stack.new_user()
    assert "Europe/Lisbon" in answer(stack, user, "/timezone Europe/Lisbon")
    assert answer(stack, user, "/timezone").startswith("Your time zone is Europe/Lisbon.")


@pytest.mark.parametrize("command", ["/foo", "/foo@StepwiseBot with words", "/start_over"])
def test_an_unknown_command_gets_the_list_of_commands_never_the_model(
    stack: MemoryStack, command: str
) -> None:
    reply = answer(stack, stack.new_user(), command)
    assert reply.startswith(f"I don't know /{command.split('@')[0].split()[0][1:].lower()}.")
    assert all(name in reply for name in MENU)


def test_after_reset_the_next_model_request_starts_with_the_new_message(stack: MemoryStack) -> None:
    user = stack.new_user()
    stack.say(user, "my name is Ada")
    stack.say(user, "I like tea")
    assert "Fresh start" in answer(stack, user, "/reset")
    stack.say(user, "what do you know?")
    (request,) = stack.anthropic.requests[-1:]
    texts = [
        block["text"] for m in request["messages"] for block in m["content"] if block.get("type") == "text"
    ]
    assert texts[0] == "what do you know?"
    assert not any("Ada" in t or "tea" in t or "Fresh start" in t for t in texts)
    stack.say(user, "and now?")  # the window stays where /reset put it
    texts = [b["text"] for m in stack.anthropic.requests[-1]["messages"] for b in m["content"] if "text" in b]
    assert "Ada" not in " ".join(texts) and texts[0] == "what do you know?"
    assert len(stack.stored(user)) == 10  # nothing deleted: 5 messages and 5 replies


def test_commands_sent_together_are_each_answered_on_their_own(stack: MemoryStack) -> None:
    user = stack.new_user()
    stack.say(user, "hello")
    before = len(stack.anthropic.requests)
    first = stack.send(user, "/reminders")
    second = stack.send(user, "/tasks")
    stack.wait_idle(user)
    assert first != second  # two turns
    assert len(stack.anthropic.requests) == before
    reminders, tasks = stack.replies(user)[-2:]
    assert "reminders" in reminders.lower() and "no tasks" in tasks


def test_commands_answer_the_same_without_an_anthropic_key() -> None:
    stack = MemoryStack(
        env={"ANTHROPIC_API_KEY": "", "ANTHROPIC_BASE_URL": "", "ANTHROPIC_API_KEY_PARAMETER": ""}
    )
    user = stack.new_user()
    assert answer(stack, user, "/usage").startswith("Your usage (estimated at list prices):")
    assert all(name in answer(stack, user, "/help") for name in MENU)
    assert "I don't know /foo." in answer(stack, user, "/foo")
