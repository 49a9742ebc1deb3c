"""The turn pipeline through the real state machine on the emulation, with fake Anthropic and Telegram
servers speaking real HTTP on 127.0.0.1: the wiring of a plain turn (one reply, both messages stored as the
messages table's items), the webhook handler's secret check, the same update delivered while its turn runs,
the ASL's retries of a failing model (and none for a permanent error) and of Telegram's 5xx, Telegram's
429s, rejected HTML, slow answers and refused connections, updates out of Telegram's ranges and the metrics
the functions publish, and "typing…" for a message that arrived while a turn ran. What a plain turn does
(the window, the model setting, the system prompt, long replies, `< > &`, "typing…" once) is tested on the
in-memory stack (tests/behaviour/test_turn_pipeline.py)."""

from __future__ import annotations

import json
import time
from datetime import datetime, timedelta
from typing import Any

import pytest
from support.network import refusing_base_url
from support.stack import Stack

from stepwise.aws.http_transport import HttpTransport, Response
from stepwise.prompt.system import is_turn_context
from stepwise.states.deliver import FRIENDLY_ERROR
from stepwise_local import updates
from stepwise_local.anthropic_server import error, hang, text


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
