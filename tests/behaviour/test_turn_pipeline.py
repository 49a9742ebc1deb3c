"""The plain turn on the in-memory stack (support.memory_stack): one reply and both messages stored; a user
off the allowlist starting nothing; the same update twice answered once; the 20-message window;
ANTHROPIC_MODEL; the system prompt; long replies and `< > &`; "typing…" shown once by the webhook's answer
and again for a message that waited. The emulated stack keeps the wiring (a turn through the real state
machine with the stored items' ids), the secret checked by the webhook handler, the ASL's retries of a
failing model and of Telegram's errors, Telegram's faults, updates out of range and the metrics the
functions publish, and the races between a running turn and new messages
(tests/integration/test_turn_pipeline.py)."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from support.memory_stack import NOT_ALLOWED_USER, MemoryStack

from stepwise.history.models import StoredMessage
from stepwise.prompt.system import is_turn_context
from stepwise_local import updates
from stepwise_local.anthropic_server import Scripted, context_text, last_user_text, text


def user_texts(request: dict[str, Any]) -> list[str]:
    """The text blocks of a request's messages (both roles), without the per-turn context block."""
    return [
        block["text"]
        for message in request["messages"]
        for block in message["content"]
        if block.get("type") == "text" and not is_turn_context(block)
    ]


def test_an_allowlisted_message_gets_exactly_one_reply_and_both_messages_are_stored(
    stack: MemoryStack,
) -> None:
    # Given an allowlisted user and a model that answers
    user = stack.new_user()
    stack.anthropic.script(text("Hello! How can I help?"))
    # When the user says hello
    execution = stack.say(user, "hello")
    # Then the turn succeeds with exactly one reply carrying the model's text
    assert execution["status"] == "SUCCEEDED"
    assert stack.replies(user) == ["Hello! How can I help?"]
    # And both messages are stored with the documented fields (the ids' form: the emulated stack's test)
    stored = stack.stored(user)
    assert [(m["role"], m["content"]) for m in stored] == [
        ("user", "hello"),
        ("assistant", "Hello! How can I help?"),
    ]
    for item in stored:
        assert {"id", "chat_id", "role", "content", "created_at"} <= set(item)
        assert datetime.fromisoformat(item["created_at"]).tzinfo is not None


def test_a_non_allowlisted_user_gets_200_and_nothing_happens(stack: MemoryStack) -> None:
    update = updates.text_message(NOT_ALLOWED_USER, "let me in")
    response = stack.post_update(update)
    stack.drain()
    assert response["statusCode"] == 200
    assert stack.turns.executions == {}
    assert stack.telegram.messages(NOT_ALLOWED_USER) == []
    assert stack.stored(NOT_ALLOWED_USER) == []
    assert stack.anthropic.requests == []


def test_the_same_update_delivered_twice_runs_one_turn_with_one_reply(stack: MemoryStack) -> None:
    user = stack.new_user()
    update = updates.text_message(user, "hello once")
    first = stack.post_update(update)
    second = stack.post_update(update)  # Telegram retrying before the turn has run
    stack.drain()
    third = stack.post_update(update)  # and again after it finished
    stack.drain()
    assert [r["statusCode"] for r in (first, second, third)] == [200, 200, 200]
    assert len(stack.turns.executions) == 1
    assert stack.replies(user) == ["You said: hello once"]
    assert len(stack.anthropic.requests) == 1


def test_with_more_than_20_stored_messages_the_model_sees_the_newest_20_oldest_first(
    stack: MemoryStack,
) -> None:
    # Given 30 earlier messages in the chat
    user = stack.new_user()
    for n in range(30):
        stack.messages.add(
            StoredMessage(
                id=f"seed{n:02d}",
                chat_id=user,
                role="assistant" if n % 2 == 0 else "user",
                content=f"earlier {n}",
                created_at=f"2026-11-01T10:00:{n:02d}.000Z",
            )
        )
    # When the user writes again
    stack.say(user, "and now?")
    # Then the model sees the newest 20 messages (19 earlier + this one), oldest first
    assert user_texts(stack.anthropic.requests[0]) == [f"earlier {n}" for n in range(11, 30)] + ["and now?"]


def test_anthropic_model_defaults_to_haiku_and_can_be_changed(stack: MemoryStack) -> None:
    user = stack.new_user()
    stack.say(user, "first")
    changed = MemoryStack(env={"ANTHROPIC_MODEL": "claude-opus-4-7"})
    changed.say(changed.new_user(), "second")
    assert [r["model"] for r in stack.anthropic.requests + changed.anthropic.requests] == [
        "claude-haiku-4-5",
        "claude-opus-4-7",
    ]


def test_the_system_prompt_holds_the_role_the_tools_section_and_the_current_time(stack: MemoryStack) -> None:
    user = stack.new_user()
    stack.say(user, "hello")
    (system,) = stack.anthropic.requests[0]["system"]
    assert "You are Stepwise, a personal assistant" in system["text"]
    assert "## Tools" in system["text"]
    assert system.get("cache_control") == {"type": "ephemeral"}
    # the time is per turn: it follows the cached prefix, at the end of the newest user message
    context = context_text(stack.anthropic.requests[0])
    stamp = context.split("The current date and time is ")[1].split()[0].rstrip(".")
    assert abs((datetime.fromisoformat(stamp) - stack.now()).total_seconds()) < 120
    assert stamp not in system["text"]


def test_a_long_reply_arrives_as_several_messages_none_over_the_limit(stack: MemoryStack) -> None:
    user = stack.new_user()
    paragraphs = [f"Part {n}. " + "All work and no play makes a long answer. " * 40 for n in range(7)]
    stack.anthropic.script(text("\n\n".join(paragraphs)))
    stack.say(user, "write a lot")
    replies = stack.replies(user)
    assert len(replies) >= 3
    assert all(0 < len(reply) <= 4096 for reply in replies)
    joined = "\n".join(replies)
    assert [joined.index(f"Part {n}.") for n in range(7)] == sorted(
        joined.index(f"Part {n}.") for n in range(7)
    )


def test_angle_brackets_and_ampersands_arrive_intact(stack: MemoryStack) -> None:
    user = stack.new_user()
    answer = 'Use if a < b && c > d: print("<tag>") — and R&D & <b>not bold</b>'
    stack.anthropic.script(text(answer))
    stack.say(user, "show me")
    assert stack.replies(user) == [answer]
    assert stack.telegram.messages(user)[0]["parse_mode"] == "HTML"


def typing_shown(stack: MemoryStack, chat_id: int) -> int:
    """The chat's "typing…" actions so far."""
    return len([c for c in stack.telegram.calls("sendChatAction") if c["params"]["chat_id"] == chat_id])


def test_typing_shows_once_from_the_webhook_answer_and_not_for_a_command(stack: MemoryStack) -> None:
    # Given a user and a model that answers
    user = stack.new_user()
    stack.anthropic.script(text("Hi."))
    # When they say hello, the webhook's answer is the Bot API call Telegram makes for it
    update = updates.text_message(user, "hello")
    answer = stack.post_update(update)
    assert answer["headers"]["x-stepwise-action"] == "started"
    assert json.loads(answer["body"]) == {"method": "sendChatAction", "chat_id": user, "action": "typing"}
    stack.drain()
    assert stack.replies(user) == ["Hi."]
    # Then "typing…" was shown once: LoadContext did not send it again a moment later
    assert typing_shown(stack, user) == 1
    # And a command shows none (its answer is immediate)
    command = updates.text_message(user, "/help")
    assert json.loads(stack.post_update(command)["body"])["action"] == "started"
    stack.drain()
    assert len(stack.replies(user)) == 2
    assert typing_shown(stack, user) == 1


def test_a_message_that_waited_shows_typing_again_when_its_turn_starts(stack: MemoryStack) -> None:
    # Given a first turn running, and a second message that arrives while its model is answering
    user = stack.new_user()
    second = updates.text_message(user, "second")
    answers: list[dict[str, Any]] = []

    def answer(request: dict[str, Any]) -> Scripted:
        if last_user_text(request) == "first":
            answers.append(stack.post_update(second))  # queued: its "typing…" shows now
            # When the second message's turn starts long after it arrived (the clock moves on by ten seconds)
            stack.advance_clock(10)
            return text("first answer")
        return text("second answer")

    stack.anthropic.default = answer
    stack.say(user, "first")
    assert [a["headers"]["x-stepwise-action"] for a in answers] == ["queued"]
    assert stack.replies(user) == ["first answer", "second answer"]
    # Then its turn shows "typing…" again: two from the webhook's answers, one from the second LoadContext
    assert typing_shown(stack, user) == 3
