"""FinishTurn, taking the chat back after an approval, and the recovery of a dead turn, on in-memory ports."""

from __future__ import annotations

import pytest
from support.turn_fakes import turn_start

from stepwise.services import TurnServices
from stepwise.states.contracts.base import Next
from stepwise.states.contracts.finish_turn import FinishTurnInput
from stepwise.states.contracts.run_tools import RunToolsInput
from stepwise.states.finish_turn import finish_turn
from stepwise.states.load_context import load_context
from stepwise.states.recovery import recover_turn
from stepwise.states.run_tools import MAX_RETAKE_RETRIES, ChatBusyError, retake_chat
from stepwise.telegram.conversation import Conversation
from stepwise.turn.ref import TurnRef
from stepwise.turn_records.models import Reply


def test_a_turn_whose_load_context_never_completed_gives_its_messages_back(services: TurnServices) -> None:
    begin = turn_start(services, "hello")
    services.outbound.sequencer().take_batch(
        Conversation(7), begin.turn.turn_id
    )  # taken, then LoadContext failed for good
    finish_turn(FinishTurnInput(turn=begin.turn), services)
    (waiting,) = services.outbound.sequencer().inbox.pending(Conversation(7))
    assert (waiting.status, waiting.requeues) == ("queued", 1)


def test_an_answered_turn_marks_its_messages_done(services: TurnServices) -> None:
    begin = turn_start(services, "hello")
    load_context(begin, services)
    finish_turn(FinishTurnInput(turn=begin.turn), services)
    assert services.outbound.sequencer().inbox.pending(Conversation(7)) == []


@pytest.mark.parametrize("delivered", [True, False])
def test_recovering_a_dead_turn_twice_is_the_same_as_once(services: TurnServices, delivered: bool) -> None:
    # Given a turn that took its message and died, with or without its reply delivered
    begin = turn_start(services, "hello")
    load_context(begin, services)
    if delivered:
        services.stores.turns.put_reply(
            begin.turn.turn_id,
            Reply(text="hi", source="model", message_id="r1", created_at="2026-11-23T09:00Z"),
        )
        services.stores.turns.mark_sent(begin.turn.turn_id, 1)
    # When EventBridge delivers its failure event twice
    first = recover_turn(begin.turn, "FAILED", services)
    second = recover_turn(begin.turn, "FAILED", services)
    # Then a delivered reply makes its message done; an undelivered one is queued once more, and one next
    # turn is started for it
    pending = services.outbound.sequencer().inbox.pending(Conversation(7))
    if delivered:
        assert pending == [] and first.next_turn is None and second.next_turn is None
    else:
        assert [(m.status, m.requeues) for m in pending] == [("queued", 1)]
        assert first.next_turn is not None and second.next_turn == first.next_turn


def test_retake_fails_while_another_turn_holds_the_chat(services: TurnServices) -> None:
    sequencer = services.outbound.sequencer()
    holder = sequencer.inbox.acquire_new(Conversation(7), 1, int(sequencer.epoch()), 60)
    assert holder is not None
    parked = TurnRef(turn_id="parked", chat_id=7, user_id=7, update_id=1)
    back = RunToolsInput(turn=parked, next=Next(route="approval"), resume=True)
    with pytest.raises(ChatBusyError):
        retake_chat(back, services)
    sequencer.inbox.release(Conversation(7), holder.name)
    retake_chat(back, services)
    lease = sequencer.inbox.holder(Conversation(7))
    assert lease is not None and lease[0] == "parked"


def test_after_every_retry_a_busy_chat_is_retaken_regardless(services: TurnServices) -> None:
    sequencer = services.outbound.sequencer()
    assert sequencer.inbox.acquire_new(Conversation(7), 1, int(sequencer.epoch()), 60) is not None
    parked = TurnRef(turn_id="parked", chat_id=7, user_id=7, update_id=1)
    last = RunToolsInput(
        turn=parked, next=Next(route="approval"), resume=True, retake_attempt=MAX_RETAKE_RETRIES
    )
    retake_chat(last, services)  # no ChatBusyError: the turn goes on
