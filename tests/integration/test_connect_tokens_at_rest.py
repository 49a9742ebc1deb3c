"""A token from /connect is never at rest, through the real state machine: after `/connect`, after FinishTurn
dies around the send, after the send's record fails, after Telegram refuses or keeps failing, and after
`/connect revoke`, no item of any table (all items, all attributes, JSON inside them included) holds the
token, a reversible form of it, or a value that makes it with the deployment's key; nor do the executions'
histories or the functions' log lines. The token shown works at /mcp, and is shown once (twice, the same
token, only when Telegram's answer to the send was lost)."""

from __future__ import annotations

import base64
import contextlib
import json
import logging
from collections.abc import Iterator
from typing import Any

import pytest
from boto3.dynamodb.conditions import Key
from support.mcp_client import INITIALIZE, TOKEN, connect, post
from support.stack import Stack

from stepwise.connections.minting import token_from_seed, token_key
from stepwise.connections.models import token_hash
from stepwise_local.mcp_http import LocalMcpEndpoint


@pytest.fixture
def endpoint(stack: Stack) -> Iterator[LocalMcpEndpoint]:
    with LocalMcpEndpoint(stack.emulation) as served:
        yield served


class Logs:
    """The functions' log lines (their JSON on stdout, and the records) at every level, DEBUG included."""

    def __init__(self, caplog: pytest.LogCaptureFixture, capsys: pytest.CaptureFixture[str]) -> None:
        self.caplog, self.capsys = caplog, capsys

    def text(self) -> str:
        printed = self.capsys.readouterr()
        return self.caplog.text + printed.out + printed.err


@pytest.fixture
def logs(
    stack: Stack, caplog: pytest.LogCaptureFixture, capsys: pytest.CaptureFixture[str]
) -> Iterator[Logs]:
    # The stack logs WARNING and above: the functions' loggers made already are turned down to DEBUG for the
    # test, and those made during it are made so (a function's Logger takes its level from its environment).
    stack.emulation.config.env["POWERTOOLS_LOG_LEVEL"] = "DEBUG"
    made = [
        logger
        for name, logger in logging.Logger.manager.loggerDict.items()
        if name.startswith("stepwise") and isinstance(logger, logging.Logger)
    ]
    levels = [logger.level for logger in made]
    for logger in made:
        logger.setLevel(logging.DEBUG)
    yield Logs(caplog, capsys)
    for logger, level in zip(made, levels, strict=True):
        logger.setLevel(level)


def values(value: Any) -> Iterator[str]:
    """Every string in an item, its keys and attribute names too, and in JSON held by its strings."""
    if isinstance(value, dict):
        for key, inner in value.items():
            yield str(key)
            yield from values(inner)
    elif isinstance(value, (list, set, tuple)):
        for inner in value:
            yield from values(inner)
    elif isinstance(value, (bytes, bytearray)):
        yield bytes(value).decode("latin-1")
    else:
        text = str(value)
        yield text
        if text[:1] in "{[":
            with contextlib.suppress(ValueError):
                yield from values(json.loads(text))


def every_table(stack: Stack) -> list[str]:
    """Every string of every item of every table of the template."""
    found: list[str] = []
    for spec in stack.emulation.template.tables():
        table = stack.emulation.table(spec.logical_id)
        response = table.scan()
        items = response["Items"]
        while "LastEvaluatedKey" in response:
            response = table.scan(ExclusiveStartKey=response["LastEvaluatedKey"])
            items += response["Items"]
        found += values(items)
    return found


def reversible_forms(token: str) -> set[str]:
    """The token and what gives it back at once: its secret part, encoded or turned around."""
    secret = token.removeprefix("swp_")
    raw = bytes.fromhex(secret)
    forms = {token, secret, secret.upper(), secret[::-1], token[::-1]}
    for data in (raw, token.encode(), secret.encode()):
        for encode in (base64.b64encode, base64.urlsafe_b64encode, base64.b32encode, base64.b85encode):
            encoded = encode(data).decode()
            forms |= {encoded, encoded.rstrip("=")}
    return forms


def assert_at_rest_nowhere(stack: Stack, token: str, user: int, logs: Logs) -> None:
    """No table, no execution history of the user's turns and no log line holds the token, a reversible form
    of it or a value that makes it with the deployment's key."""
    stored = every_table(stack)
    histories = [json.dumps(stack.emulation.history(e["name"]), default=str) for e in executions(stack, user)]
    lines = logs.text()
    assert "reply delivered" in lines, "the functions' log lines are seen"
    forms = reversible_forms(token)
    for where, texts in (("a table", stored), ("an execution's history", histories), ("a log", [lines])):
        assert not [f for f in forms for text in texts if f in text], f"the token is in {where}"
    key = token_key(stack.emulation.config.bot_token)
    assert not [v for v in stored if token_from_seed(key, v) == token], "a table holds what makes the token"


def executions(stack: Stack, user: int) -> list[dict[str, Any]]:
    return [e for e in stack.emulation.executions() if e["name"].startswith(f"chat{user}-turn")]


def token_messages(stack: Stack, user: int) -> list[set[str]]:
    """The tokens each message shown to the user holds, for the messages that hold one."""
    return [set(found) for reply in stack.replies(user) if (found := TOKEN.findall(reply))]


def works(endpoint: LocalMcpEndpoint, token: str) -> bool:
    return post(endpoint.url, INITIALIZE, token).status_code == 200


def connections(stack: Stack, user: int) -> list[dict[str, Any]]:
    table = stack.emulation.table("ConnectionsTable")
    return list(table.query(KeyConditionExpression=Key("pk").eq(f"user#{user}"))["Items"])


def test_a_token_is_in_no_table_history_or_log_after_connect_and_after_revoke(
    stack: Stack, endpoint: LocalMcpEndpoint, logs: Logs
) -> None:
    user = stack.new_user()
    token = connect(stack, user)
    assert works(endpoint, token)
    (connection,) = connections(stack, user)
    assert connection["token_hash"] == token_hash(token)  # only its hash, in the tokens table
    assert "shown here once" in stack.stored(user)[-1]["content"]
    assert_at_rest_nowhere(stack, token, user, logs)

    stack.say(user, "/connect revoke laptop")
    assert "Revoked" in stack.replies(user)[-1] and not works(endpoint, token)
    assert connections(stack, user) == [] and token_hash(token) not in every_table(stack)
    assert_at_rest_nowhere(stack, token, user, logs)


@pytest.mark.parametrize("when", ["before", "after"])
def test_a_finish_turn_that_dies_around_the_send_shows_the_token_once(
    stack: Stack, endpoint: LocalMcpEndpoint, logs: Logs, when: str
) -> None:
    user = stack.new_user()
    stack.emulation.crash("FinishTurnFunction", when)  # "after": sent, recorded, settled; no result
    token = connect(stack, user)
    assert not stack.emulation._crashes.get("FinishTurnFunction"), "the crash happened"
    assert token_messages(stack, user) == [{token}], "shown exactly once"
    assert works(endpoint, token)
    assert_at_rest_nowhere(stack, token, user, logs)


@pytest.mark.parametrize(("status", "times"), [(429, 1), (502, 2)], ids=["429-retry-after", "502-twice"])
def test_telegram_failing_before_the_send_delays_the_token_and_shows_it_once(
    stack: Stack, endpoint: LocalMcpEndpoint, logs: Logs, status: int, times: int
) -> None:
    user = stack.new_user()
    stack.telegram.fail_next("sendMessage", status, times=times)
    token = connect(stack, user)
    assert token_messages(stack, user) == [{token}] and works(endpoint, token)
    assert_at_rest_nowhere(stack, token, user, logs)


def test_a_send_whose_record_failed_shows_the_same_token_again(
    stack: Stack, endpoint: LocalMcpEndpoint, logs: Logs
) -> None:
    """Telegram took the message, recording it did not (the one window Telegram leaves open): the retry sends
    it again, with the same token, made again from the same seed."""
    user = stack.new_user()
    stack.emulation.throttle("TurnsTable", 1, function="FinishTurnFunction", operation="UpdateItem")
    stack.say(user, "/connect laptop")
    assert stack.emulation.throttled[-1] == ("FinishTurnFunction", "TurnsTable", "UpdateItem")
    first, again = token_messages(stack, user)
    assert first == again and len(first) == 1
    token = first.pop()
    assert works(endpoint, token)
    assert_at_rest_nowhere(stack, token, user, logs)


def test_a_tokens_table_that_refuses_finish_turn_once_delays_the_token(
    stack: Stack, endpoint: LocalMcpEndpoint, logs: Logs
) -> None:
    user = stack.new_user()
    stack.emulation.throttle("ConnectionsTable", 1, function="FinishTurnFunction")
    token = connect(stack, user)
    assert stack.emulation.throttled[-1][:2] == ("FinishTurnFunction", "ConnectionsTable")
    assert token_messages(stack, user) == [{token}] and works(endpoint, token)
    assert_at_rest_nowhere(stack, token, user, logs)


@pytest.mark.parametrize(
    ("status", "times"), [(403, 1), (502, 50)], ids=["blocked-for-good", "telegram-down-past-every-retry"]
)
def test_a_token_that_never_reaches_the_chat_is_revoked_and_made_again_on_request(
    stack: Stack, endpoint: LocalMcpEndpoint, logs: Logs, status: int, times: int
) -> None:
    user = stack.new_user()
    stack.telegram.fail_next("sendMessage", status, times=times)
    stack.say(user, "/connect laptop")
    assert stack.replies(user) == []
    # nothing of it is left: no connection, no seed (so no token of it can ever be made)
    assert connections(stack, user) == []
    (turn,) = [e["name"] for e in executions(stack, user)]
    reply = stack.emulation.table("TurnsTable").get_item(Key={"turn_id": turn, "sk": "reply"})["Item"]
    assert "token_seed" not in reply and reply["token_revoked"] is True
    kept = stack.stored(user)[-1]["content"]
    assert "never reached this chat" in kept and "/connect laptop makes a new one" in kept
    # the way forward: the same command again, once Telegram takes messages
    stack.telegram.clear_faults()
    token = connect(stack, user)
    assert works(endpoint, token)
    assert_at_rest_nowhere(stack, token, user, logs)


def test_a_turn_whose_finish_fails_for_good_leaves_no_seed_and_answers_again(
    stack: Stack, endpoint: LocalMcpEndpoint, logs: Logs
) -> None:
    """FinishTurn and FinishTurnUndelivered die past every retry: the execution fails, RecoverChat settles the
    token (never sent: its connection goes, its seed too) and queues the message again for the next turn."""
    user = stack.new_user()
    stack.emulation.crash("FinishTurnFunction", "before", times=14)  # 7 attempts of each of the two states
    assert stack.say(user, "/connect laptop")["status"] == "FAILED"
    assert not stack.emulation._crashes.get("FinishTurnFunction"), "every attempt died"
    stack.emulation.wait_idle(user)  # the recovery, then the next turn, which answers the message again
    (failed,) = [e["name"] for e in executions(stack, user) if e["status"] == "FAILED"]
    reply = stack.emulation.table("TurnsTable").get_item(Key={"turn_id": failed, "sk": "reply"})["Item"]
    assert "token_seed" not in reply and reply["token_revoked"] is True
    (token,) = token_messages(stack, user)[0]
    assert token_messages(stack, user) == [{token}] and works(endpoint, token)
    (connection,) = connections(stack, user)
    assert connection["created_by_turn"] != failed
    assert_at_rest_nowhere(stack, token, user, logs)
