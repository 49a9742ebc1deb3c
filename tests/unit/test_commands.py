"""The command table and parsing, and command turns on in-memory ports (no model call, no network)."""

from __future__ import annotations

import dataclasses
import re

import pytest
from support.turn_fakes import (
    ScriptedModel,
    conversation_texts,
    drive_turn,
    text_response,
    turn_settings,
    turn_start,
)

from stepwise.commands.table import COMMANDS, menu, route
from stepwise.memory.service import MemoryService
from stepwise.services import Tools, TurnServices
from stepwise.states.load_context import load_context
from stepwise.telegram.commands import ParsedCommand, is_command, parse_command
from stepwise.telegram.conversation import Conversation
from stepwise.tools.catalog import build_registry
from stepwise_local.in_memory.ledger import InMemoryToolCallLedger
from stepwise_local.in_memory.tasks import InMemoryTaskRepository
from stepwise_local.in_memory.telegram import InMemoryTelegram


@pytest.mark.parametrize(
    ("text", "parsed"),
    [
        ("/help", ParsedCommand("help")),
        ("/HELP", ParsedCommand("help")),
        ("/help@Stepwise_bot", ParsedCommand("help")),
        ("  /timezone   Europe/Lisbon ", ParsedCommand("timezone", "Europe/Lisbon")),
        ("/timezone@MyBot Europe/Lisbon", ParsedCommand("timezone", "Europe/Lisbon")),
        ("/foo bar\nbaz", ParsedCommand("foo", "bar\nbaz")),
        ("/start_over", ParsedCommand("start_over")),
    ],
)
def test_a_command_is_read_with_its_arguments_and_without_the_bots_name(
    text: str, parsed: ParsedCommand
) -> None:
    assert parse_command(text) == parsed
    assert is_command(text)


@pytest.mark.parametrize(
    "text", ["hello /help", "/", "/ help", "/usr/bin/env", "/help!", "", "add /tasks", "/" + "a" * 33]
)
def test_text_that_merely_contains_a_slash_is_no_command(text: str) -> None:
    assert parse_command(text) is None
    assert route(text) is None


def test_commands_are_answered_by_the_table_except_timezone_with_a_zone_which_the_rules_set() -> None:
    assert route("/help") == "answer"
    assert route("/unknown") == "answer"
    assert route("/timezone") == "answer"
    assert route("/timezone Europe/Lisbon") == "rules"
    assert route("/timezone@MyBot Europe/Lisbon") == "rules"


def test_the_menu_is_what_telegram_accepts_and_comes_from_the_table() -> None:
    entries = menu()
    assert [e["command"] for e in entries] == [c.name for c in COMMANDS if c.in_menu]
    assert {"help", "tasks", "reminders", "memory", "reset", "usage", "timezone"} <= {
        e["command"] for e in entries
    }
    assert len(entries) <= 100
    for entry in entries:
        assert re.fullmatch(r"[a-z0-9_]{1,32}", entry["command"])
        assert 1 <= len(entry["description"]) <= 256
    assert len({c.name for c in COMMANDS}) == len(COMMANDS)


def run_turn(services: TurnServices, text: str, update_id: int) -> None:
    start = turn_start(
        services, text, update_id=update_id, created_at=f"2026-11-22T09:{update_id:02d}:00.000Z"
    )
    drive_turn(services, start)


def test_a_command_is_answered_without_a_model_call_or_typing_and_stored(
    services: TurnServices, model: ScriptedModel, telegram: InMemoryTelegram
) -> None:
    run_turn(services, "/usage", 1)
    assert model.requests == []
    assert telegram.texts(7) == ["Usage is not counted in this deployment."]
    assert telegram.calls_of("send_chat_action") == []
    stored = services.stores.messages.recent(Conversation(7), 20)
    assert [(m.role, m.content) for m in stored] == [
        ("user", "/usage"),
        ("assistant", "Usage is not counted in this deployment."),
    ]


def test_a_retried_load_context_keeps_the_first_answer(services: TurnServices) -> None:
    start = turn_start(services, "/reset")
    assert load_context(start, services).route == "reply"
    first = services.stores.turns.get_reply(start.turn.turn_id)
    assert first is not None
    assert load_context(start, services).route == "reply"
    assert services.stores.turns.get_reply(start.turn.turn_id) == first


def test_memory_says_so_when_long_term_memory_is_not_deployed(
    services: TurnServices,
    telegram: InMemoryTelegram,
    tasks: InMemoryTaskRepository,
    ledger: InMemoryToolCallLedger,
) -> None:
    registry = build_registry(tasks=tasks, ledger=ledger)
    without_memory = dataclasses.replace(
        services, stores=dataclasses.replace(services.stores, memory=None), tools=Tools(lambda: registry)
    )
    run_turn(without_memory, "/memory", 1)
    assert telegram.texts(7) == [
        "Long-term memory is not deployed here: I remember only our recent messages."
    ]


def test_reset_starts_the_next_window_after_its_answer_and_deletes_nothing(
    services: TurnServices, model: ScriptedModel
) -> None:
    model.responses += [text_response("Hi Ada"), text_response("You asked for a fresh start.")]
    run_turn(services, "my name is Ada", 1)
    run_turn(services, "/reset", 2)
    run_turn(services, "who am I?", 3)
    assert conversation_texts(model.requests[-1].messages) == ["who am I?"]
    assert len(services.stores.messages.recent(Conversation(7), 20)) == 6


APP_URL = "https://example.execute-api.eu-west-1.amazonaws.com/app"


def test_app_answers_with_a_web_app_button_in_the_private_chat_only(
    services: TurnServices, telegram: InMemoryTelegram
) -> None:
    from stepwise.inbox.models import QueuedMessage
    from stepwise.turn.ref import TurnRef
    from stepwise.turn.start import TurnStart

    run_turn(services, "/app", 1)
    assert telegram.texts(7) == ["The Mini App is not deployed here."]

    deployed = dataclasses.replace(services, settings=turn_settings(app_url=APP_URL))
    run_turn(deployed, "/app", 2)
    sent = [m for m in telegram.sent if m.chat_id == 7][-1]
    assert sent.text.endswith("tap the button below.")
    assert sent.reply_markup is not None
    assert sent.reply_markup.to_api() == {
        "inline_keyboard": [[{"text": "Open Stepwise", "web_app": {"url": APP_URL}}]]
    }
    stored = deployed.stores.messages.recent(Conversation(7), 10)
    assert stored[-1].content.endswith("tap the button below."), "the history keeps the text"

    group = -100
    deployed.outbound.sequencer().inbox.enqueue(
        QueuedMessage(
            chat_id=group,
            update_id=3,
            user_id=7,
            id="g3",
            text="/app",
            received_at="2026-11-22T09:03:00.000Z",
        ),
        expires_at=0,
    )
    drive_turn(deployed, TurnStart(turn=TurnRef(turn_id="g3", chat_id=group, user_id=7, update_id=3)))
    assert telegram.texts(group) == ["The Mini App opens from our private chat: send /app there."]
    assert all(m.reply_markup is None for m in telegram.sent if m.chat_id == group)


def test_memory_lists_a_summarys_bullets_as_lines_of_their_own(
    services: TurnServices, telegram: InMemoryTelegram, memory: MemoryService
) -> None:
    now = "2026-11-22T09:00:00.000Z"
    fact = memory.remember(7, 7, "I take my coffee black", now)
    summary = "- Said: my sister Anna lives in Lisbon\n- Done: Remembered: I take my coffee black"
    summary_id = memory.save_summary(7, Conversation(7), summary, now)
    run_turn(services, "/memory", 1)
    (shown,) = telegram.texts(7)
    lines = shown.splitlines()
    assert lines[0] == "What I remember about you (2):"
    assert f"• [{fact}] I take my coffee black" in lines
    at = lines.index(f"• [{summary_id}]")
    assert lines[at + 1 : at + 3] == [
        "  • Said: my sister Anna lives in Lisbon",
        "  • Done: Remembered: I take my coffee black",
    ]
