"""The turn pipeline through the real state machine on the emulation, with fake Anthropic and Telegram
servers speaking real HTTP on 127.0.0.1."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from support.network import refusing_base_url
from support.stack import NOT_ALLOWED_USER, Stack

from stepwise.aws.http_transport import HttpTransport, Response
from stepwise.history.dynamodb import DynamoMessageRepository
from stepwise.history.models import StoredMessage
from stepwise.prompt.system import is_turn_context
from stepwise.states.deliver import FRIENDLY_ERROR
from stepwise_local import updates
from stepwise_local.anthropic_server import context_text, error, hang, text


def user_texts(request: dict) -> list[str]:  # type: ignore[type-arg]
    return [
        block["text"]
        for message in request["messages"]
        for block in message["content"]
        if block.get("type") == "text" and not is_turn_context(block)
    ]


def test_an_allowlisted_message_gets_exactly_one_reply_and_both_messages_are_stored(stack: Stack) -> None:
    # Given an allowlisted user and a model that answers
    user = stack.new_user()
    stack.anthropic.script(text("Hello! How can I help?"))
    # When the user says hello
    execution = stack.say(user, "hello")
    # Then the turn succeeds with exactly one reply carrying the model's text
    assert execution["status"] == "SUCCEEDED"
    assert stack.replies(user) == ["Hello! How can I help?"]
    # And both messages are stored with the documented fields
    stored = stack.stored(user)
    assert [(m["role"], m["content"]) for m in stored] == [
        ("user", "hello"),
        ("assistant", "Hello! How can I help?"),
    ]
    for item in stored:
        assert {"id", "chat_id", "role", "content", "created_at"} <= set(item)
        assert len(item["id"]) == 21
        assert datetime.fromisoformat(item["created_at"]).tzinfo is not None


def test_a_non_allowlisted_user_gets_200_and_nothing_happens(stack: Stack) -> None:
    before = len(stack.emulation.executions())
    update = updates.text_message(NOT_ALLOWED_USER, "let me in")
    response = stack.emulation.post_update(update)
    assert response["statusCode"] == 200
    assert len(stack.emulation.executions()) == before
    assert stack.telegram.messages(NOT_ALLOWED_USER) == []
    assert stack.stored(NOT_ALLOWED_USER) == []
    assert stack.anthropic.requests == []


@pytest.mark.parametrize(("secret", "status"), [(None, 401), ("not-the-secret", 403)])
def test_a_wrong_or_missing_secret_is_rejected_and_starts_nothing(
    stack: Stack, secret: str | None, status: int
) -> None:
    user = stack.new_user()
    before = len(stack.emulation.executions())
    response = stack.emulation.post_update(updates.text_message(user, "hello"), secret=secret)
    assert response["statusCode"] == status
    assert len(stack.emulation.executions()) == before
    assert stack.stored(user) == []


def test_the_same_update_delivered_twice_runs_one_turn_with_one_reply(stack: Stack) -> None:
    user = stack.new_user()
    update = updates.text_message(user, "hello once")
    first = stack.emulation.post_update(update)
    second = stack.emulation.post_update(update)  # Telegram retrying while the turn runs
    stack.emulation.wait_for_update(update["message"]["chat"]["id"], update["update_id"])
    third = stack.emulation.post_update(update)  # and again after it finished
    assert [r["statusCode"] for r in (first, second, third)] == [200, 200, 200]
    names = [e["name"] for e in stack.emulation.executions() if e["name"].startswith(f"chat{user}-")]
    assert len(names) == 1
    assert stack.replies(user) == ["You said: hello once"]
    assert len(stack.anthropic.requests) == 1


@pytest.mark.parametrize(
    "failure",
    [error(500), error(529, "overloaded_error"), hang(2.0)],
    ids=["http-500", "overloaded-529", "timeout"],
)
def test_a_model_that_keeps_failing_gets_one_friendly_reply_and_the_message_survives(
    stack: Stack, failure: object
) -> None:
    # Given a model API that fails every time (the client times out after 0.3 s)
    user = stack.new_user()
    stack.emulation.config.env["ANTHROPIC_TIMEOUT_SECONDS"] = "0.3"
    stack.anthropic.always(failure)  # type: ignore[arg-type]
    # When the user writes
    execution = stack.say(user, "are you there?")
    # Then the state machine retried, and the user got one short friendly message; the turn ended cleanly
    assert execution["status"] == "SUCCEEDED"
    assert stack.replies(user) == [FRIENDLY_ERROR]
    model_calls = [e for e in stack.emulation.history(execution["name"]) if e["type"] == "TaskFailed"]
    assert len(model_calls) == 4, "one call and three retries"
    assert [m["content"] for m in stack.stored(user)] == ["are you there?"]
    # And when the model is back, the next turn's context holds the earlier message
    stack.anthropic.reset()
    stack.anthropic.script(text("Yes, I'm here."))
    stack.say(user, "hello?")
    assert user_texts(stack.anthropic.requests[-1]) == ["are you there?", "hello?"]
    assert stack.replies(user) == [FRIENDLY_ERROR, "Yes, I'm here."]


def test_a_permanent_model_error_is_not_retried(stack: Stack) -> None:
    user = stack.new_user()
    stack.anthropic.always(error(400, "invalid_request_error"))
    execution = stack.say(user, "hello")
    assert execution["status"] == "SUCCEEDED"
    assert len(stack.anthropic.requests) == 1
    assert stack.replies(user) == [FRIENDLY_ERROR]


def test_with_more_than_20_stored_messages_the_model_sees_the_newest_20_oldest_first(stack: Stack) -> None:
    # Given 30 earlier messages in the chat
    user = stack.new_user()
    repository = DynamoMessageRepository(stack.emulation.table("MessagesTable"))
    for n in range(30):
        repository.add(
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


def test_anthropic_model_defaults_to_haiku_and_can_be_changed(stack: Stack) -> None:
    user = stack.new_user()
    stack.say(user, "first")
    stack.emulation.config.env["ANTHROPIC_MODEL"] = "claude-opus-4-7"
    stack.say(user, "second")
    assert [r["model"] for r in stack.anthropic.requests] == ["claude-haiku-4-5", "claude-opus-4-7"]


def test_the_system_prompt_holds_the_role_the_tools_section_and_the_current_time(stack: Stack) -> None:
    user = stack.new_user()
    stack.say(user, "hello")
    (system,) = stack.anthropic.requests[0]["system"]
    assert "You are Stepwise, a personal assistant" in system["text"]
    assert "## Tools" in system["text"]
    assert system.get("cache_control") == {"type": "ephemeral"}
    # the time is per turn: it follows the cached prefix, at the end of the newest user message
    context = context_text(stack.anthropic.requests[0])
    stamp = context.split("The current date and time is ")[1].split()[0].rstrip(".")
    assert abs((datetime.fromisoformat(stamp) - datetime.now(UTC)).total_seconds()) < 120
    assert stamp not in system["text"]


def test_a_long_reply_arrives_as_several_messages_none_over_the_limit(stack: Stack) -> None:
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


def test_angle_brackets_and_ampersands_arrive_intact(stack: Stack) -> None:
    user = stack.new_user()
    answer = 'Use if a < b && c > d: print("<tag>") — and R&D & <b>not bold</b>'
    stack.anthropic.script(text(answer))
    stack.say(user, "show me")
    assert stack.replies(user) == [answer]
    assert stack.telegram.messages(user)[0]["parse_mode"] == "HTML"


def test_a_telegram_429_is_waited_out_and_the_reply_arrives_once(stack: Stack) -> None:
    user = stack.new_user()
    stack.telegram.fail_next("sendMessage", 429, "Too Many Requests: retry after 1", retry_after=1)
    stack.anthropic.script(text("Patience pays."))
    stack.say(user, "hello")
    assert stack.replies(user) == ["Patience pays."]
    statuses = [a["status"] for a in stack.telegram.attempts("sendMessage") if a["params"]["chat_id"] == user]
    assert statuses == [429, 200]


def test_rejected_entities_fall_back_to_plain_text_once(stack: Stack) -> None:
    user = stack.new_user()
    stack.telegram.reject_html_next()
    stack.anthropic.script(text("**Bold** move"))
    stack.say(user, "hello")
    assert stack.replies(user) == ["Bold move"]
    assert "parse_mode" not in stack.telegram.messages(user)[0]


def test_a_telegram_server_error_is_retried_by_the_state_machine_without_duplicates(stack: Stack) -> None:
    user = stack.new_user()
    stack.telegram.fail_next("sendMessage", 502, "Bad Gateway")
    stack.anthropic.script(text("Still here."))
    execution = stack.say(user, "hello")
    assert execution["status"] == "SUCCEEDED"
    assert stack.replies(user) == ["Still here."]
    assert [e["type"] for e in stack.emulation.history(execution["name"]) if e["type"] == "TaskFailed"] == [
        "TaskFailed"
    ]


def failed_tasks(stack: Stack, name: str) -> list[str]:
    """The error names of the execution's failed task attempts, in order."""
    return [
        e["taskFailedEventDetails"]["error"]
        for e in stack.emulation.history(name)
        if e["type"] == "TaskFailed"
    ]


def test_a_slow_telegram_answer_is_awaited_and_the_reply_arrives_once(stack: Stack) -> None:
    # Given Telegram answers sendMessage after 0.6 s, longer than other calls are given (0.2 s)
    user = stack.new_user()
    stack.emulation.config.env.update(
        {"TELEGRAM_TIMEOUT_SECONDS": "0.2", "TELEGRAM_SEND_TIMEOUT_SECONDS": "5"}
    )
    stack.telegram.slow_next("sendMessage", 0.6)
    stack.anthropic.script(text("Slow and steady."))
    # When the turn runs
    execution = stack.say(user, "hello")
    # Then SendReply waited for the answer: one reply, no failed attempt, so no retry that could duplicate it
    assert execution["status"] == "SUCCEEDED"
    assert stack.replies(user) == ["Slow and steady."]
    assert failed_tasks(stack, execution["name"]) == []


def test_a_refused_connection_is_retried_by_the_state_machine_and_the_reply_arrives_once(
    stack: Stack, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given the first sendMessage finds nothing listening (really refused): nothing reached Telegram
    user = stack.new_user()
    stack.anthropic.script(text("Got through."))
    send = HttpTransport.request
    refusals = [1]

    with refusing_base_url() as unreachable:

        def refuse_first_send(transport: HttpTransport, method: str, url: str, **kwargs: Any) -> Response:
            if url.endswith("/sendMessage") and refusals[0]:
                refusals[0] -= 1
                url = url.replace(stack.telegram.base_url, unreachable)
            return send(transport, method, url, **kwargs)

        monkeypatch.setattr(HttpTransport, "request", refuse_first_send)
        # When the turn runs
        execution = stack.say(user, "hello")
    # Then the state machine retried SendReply after the transient error, and the reply arrived once
    assert execution["status"] == "SUCCEEDED"
    assert refusals == [0]
    assert failed_tasks(stack, execution["name"]) == ["TelegramTransientError"]
    assert stack.replies(user) == ["Got through."]


@pytest.mark.parametrize(
    ("path", "value"),
    [("update_id", 10**40), ("message.chat.id", 10**40), ("message.from.id", 2**53), ("update_id", "1")],
)
def test_an_update_with_numbers_out_of_telegrams_ranges_is_dropped_with_200_and_starts_nothing(
    stack: Stack, path: str, value: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    user = stack.new_user()
    update = updates.text_message(user, "hello")
    *parents, last = path.split(".")
    target = update
    for key in parents:
        target = target[key]
    target[last] = value
    before = len(stack.emulation.executions())
    stack.emulation.config.env["POWERTOOLS_METRICS_DISABLED"] = "false"  # the emulation turns metrics off
    try:
        response = stack.emulation.post_update(update)
    finally:
        del stack.emulation.config.env["POWERTOOLS_METRICS_DISABLED"]
    # 200: Telegram redelivers any other answer for hours, and this update will never validate
    assert response["statusCode"] == 200 and json.loads(response["body"])["action"] == "invalid"
    assert '"InvalidUpdates"' in capsys.readouterr().out, "counted in a metric (EMF on stdout)"
    assert len(stack.emulation.executions()) == before
    assert stack.stored(user) == []


def typing_shown(stack: Stack, chat_id: int, expected: int) -> int:
    """The chat's "typing…" actions, once `expected` have arrived (Telegram runs the webhook answer's method
    on its own time: the emulation does it in a thread) or after two seconds."""
    deadline = time.monotonic() + 2.0
    while True:
        shown = [c for c in stack.telegram.calls("sendChatAction") if c["params"]["chat_id"] == chat_id]
        if len(shown) >= expected or time.monotonic() > deadline:
            return len(shown)
        time.sleep(0.01)


def test_typing_shows_once_from_the_webhook_answer_and_not_for_a_command(stack: Stack) -> None:
    # Given a user and a model that answers
    user = stack.new_user()
    stack.anthropic.script(text("Hi."))
    # When they say hello, the webhook's answer is the Bot API call Telegram makes for it
    update = updates.text_message(user, "hello")
    answer = stack.emulation.post_update(update)
    assert answer["headers"]["x-stepwise-action"] == "started"
    assert json.loads(answer["body"]) == {"method": "sendChatAction", "chat_id": user, "action": "typing"}
    stack.emulation.wait_for_update(user, update["update_id"])
    stack.emulation.wait_idle(user)
    # Then "typing…" was shown once: LoadContext did not send it again a moment later
    assert typing_shown(stack, user, 1) == 1
    # And a command shows none (its answer is immediate)
    command = updates.text_message(user, "/help")
    assert json.loads(stack.emulation.post_update(command)["body"])["action"] == "started"
    stack.emulation.wait_for_update(user, command["update_id"])
    assert typing_shown(stack, user, 2) == 1


def test_a_message_that_waited_shows_typing_again_when_its_turn_starts(stack: Stack) -> None:
    # Given a first turn held before its last state, and a second message that arrives while it runs
    user = stack.new_user()
    stack.anthropic.script(text("first answer"), text("second answer"))
    second = updates.text_message(user, "second")
    with stack.emulation.holding("FinishTurnFunction") as hold:  # the first turn is still running
        stack.emulation.post_update(updates.text_message(user, "first"))
        hold.wait_until_held()
        answer = stack.emulation.post_update(second)  # queued: its "typing…" shows now
        # When the second message's turn starts long after it arrived (the clock moves on by ten seconds)
        stack.emulation.advance_clock(timedelta(seconds=10))
    assert answer["headers"]["x-stepwise-action"] == "queued"
    stack.emulation.wait_for_update(user, second["update_id"])
    stack.emulation.wait_idle(user)
    # Then its turn shows "typing…" again: two from the webhook's answers, one from the second LoadContext
    assert typing_shown(stack, user, 3) == 3


def test_call_model_publishes_its_usage_and_a_failed_call_no_empty_metrics_warning(
    stack: Stack, capsys: pytest.CaptureFixture[str], recwarn: pytest.WarningsRecorder
) -> None:
    user = stack.new_user()
    stack.emulation.config.env["POWERTOOLS_METRICS_DISABLED"] = "false"  # the emulation turns metrics off
    try:
        # a call that answers publishes its token usage (EMF on stdout)
        stack.anthropic.script(text("Hi!"))
        stack.say(user, "hello")
        published = [line for line in capsys.readouterr().out.splitlines() if '"_aws"' in line]
        assert any('"input_tokens"' in line and '"output_tokens"' in line for line in published), published
        # a call that fails (the model unreachable, every retry) has nothing to publish, and says nothing
        stack.anthropic.always(error(500))
        stack.say(user, "hello again")
    finally:
        del stack.emulation.config.env["POWERTOOLS_METRICS_DISABLED"]
    assert stack.replies(user)[-1] == FRIENDLY_ERROR
    warned = [str(warning.message) for warning in recwarn]
    assert not [message for message in warned if "No application metrics" in message], warned
