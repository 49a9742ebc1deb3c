"""The history window moves in blocks, so consecutive turns send the same messages first (prompt caching)."""

from __future__ import annotations

import pytest
from support.turn_fakes import (
    ScriptedModel,
    conversation_texts,
    drive_turn,
    text_response,
    turn_settings,
    turn_start,
)

from stepwise.history.models import StoredMessage
from stepwise.services import TurnServices
from stepwise.states.load_context import load_context
from stepwise.telegram.conversation import Conversation


def play(services: TurnServices, model: ScriptedModel, turns: int) -> tuple[list[int], list[list[str]]]:
    """Play whole turns (question n, answer n); returns each window's size and the texts the model saw."""
    sizes, seen = [], []
    for n in range(1, turns + 1):
        model.responses.append(text_response(f"a{n}"))
        start = turn_start(services, f"q{n}", update_id=n, created_at=f"2026-11-22T09:{n:02d}:00.000Z")
        drive_turn(services, start)
        meta = services.stores.turns.get_meta(start.turn.turn_id)
        sizes.append(len(services.stores.messages.between(Conversation(7), meta.first_key, meta.last_key)))
        seen.append(conversation_texts(model.requests[-1].messages))
    return sizes, seen


def test_the_window_grows_to_the_limit_plus_the_margin_then_drops_back_to_the_limit(
    services: TurnServices, model: ScriptedModel
) -> None:
    services.settings = turn_settings(history_limit=4, history_margin=4)
    sizes, seen = play(services, model, 10)
    assert sizes == [1, 3, 5, 7, 4, 6, 8, 4, 6, 8]
    # turn 5 keeps the newest 4 (a3 q4 a4 q5); the list starts with the user, so a3 is left out
    assert seen[4] == ["q4", "a4", "q5"]
    assert seen[6] == ["q4", "a4", "q5", "a5", "q6", "a6", "q7"]


def test_between_moves_each_turn_starts_with_exactly_the_previous_turns_messages(
    services: TurnServices, model: ScriptedModel
) -> None:
    services.settings = turn_settings(history_limit=4, history_margin=4)
    _, seen = play(services, model, 10)
    kept = [n for n in range(1, 10) if seen[n][: len(seen[n - 1])] == seen[n - 1]]
    assert kept == [1, 2, 3, 5, 6, 8, 9], "the window moved at turns 5 and 8 only"
    for n in kept:
        assert seen[n][len(seen[n - 1]) :] == [f"a{n}", f"q{n + 1}"]


def test_with_no_margin_the_window_slides_by_one_turn_as_before(
    services: TurnServices, model: ScriptedModel
) -> None:
    services.settings = turn_settings(history_limit=4, history_margin=0)
    sizes, seen = play(services, model, 5)
    assert sizes == [1, 3, 4, 4, 4]
    assert seen[3:] == [["q3", "a3", "q4"], ["q4", "a4", "q5"]]


@pytest.mark.parametrize("margin", [0, 3])
def test_a_retried_load_context_fixes_the_same_window(
    services: TurnServices, model: ScriptedModel, margin: int
) -> None:
    services.settings = turn_settings(history_limit=4, history_margin=margin)
    play(services, model, 4)
    start = turn_start(services, "q5", update_id=5, created_at="2026-11-22T09:05:00.000Z")
    load_context(start, services)
    first = services.stores.turns.get_meta(start.turn.turn_id)
    load_context(start, services)
    again = services.stores.turns.get_meta(start.turn.turn_id)
    assert (again.first_key, again.last_key) == (first.first_key, first.last_key)


def test_a_chat_stored_before_block_windows_starts_with_the_newest_limit_then_keeps_its_start(
    services: TurnServices, model: ScriptedModel
) -> None:
    services.settings = turn_settings(history_limit=4, history_margin=2)
    for n in range(12):  # stored without the chat knowing where its window starts (as after an upgrade)
        services.stores.messages.add(
            StoredMessage(
                id=f"old{n:02d}",
                chat_id=7,
                role="user" if n % 2 == 0 else "assistant",
                content=f"old {n}",
                created_at=f"2026-11-22T08:00:{n:02d}.000Z",
            )
        )
    sizes, seen = play(services, model, 2)
    assert sizes == [4, 6]
    assert seen == [["old 10", "old 11", "q1"], ["old 10", "old 11", "q1", "a1", "q2"]]
