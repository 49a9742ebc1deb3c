"""One turn at a time per chat: the inbox, the lease and the hand-over between turns, on in-memory fakes."""

from __future__ import annotations

import random
import threading
from datetime import UTC, datetime

import pytest
from support.turn_fakes import RecordingStarter

from stepwise.inbox.models import QueuedMessage
from stepwise.inbox.sequencer import Sequencer, arrival_order
from stepwise.telegram.conversation import Conversation
from stepwise_local.in_memory.inbox import InMemoryChatInbox

CHAT = 5
WHERE = Conversation(CHAT)


class Epoch:
    """A settable epoch clock (seconds)."""

    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def epoch() -> Epoch:
    return Epoch()


@pytest.fixture
def starter() -> RecordingStarter:
    return RecordingStarter()


@pytest.fixture
def sequencer(starter: RecordingStarter, epoch: Epoch) -> Sequencer:
    return Sequencer(
        inbox=InMemoryChatInbox(),
        starter=starter,
        lease_seconds=60,
        epoch=epoch,
        clock=lambda: datetime(2026, 11, 23, 9, 0, tzinfo=UTC),
    )


def message(update_id: int, user_id: int = CHAT, chat_id: int = CHAT) -> QueuedMessage:
    return QueuedMessage(
        chat_id=chat_id,
        update_id=update_id,
        user_id=user_id,
        id=f"m{update_id}",
        text=f"text {update_id}",
        received_at="2026-11-23T08:59:00.000Z",
    )


def test_the_first_message_starts_a_turn_and_a_burst_behind_it_waits(
    sequencer: Sequencer, starter: RecordingStarter
) -> None:
    assert sequencer.admit(message(1)) == "started"
    assert [sequencer.admit(message(n)) for n in (2, 3, 4, 5)] == ["queued"] * 4
    assert list(starter.started) == [f"chat{CHAT}-turn1-update1"]


def test_a_turn_takes_everything_waiting_and_the_burst_behind_it_is_folded_into_one_next_turn(
    sequencer: Sequencer, starter: RecordingStarter
) -> None:
    # Given a turn answering message 1 while messages 2..5 arrive
    sequencer.admit(message(1))
    first = sequencer.take_batch(WHERE, "chat5-turn1-update1")
    for n in (2, 3, 4, 5):
        sequencer.admit(message(n))
    # When the turn ends
    next_turn = sequencer.end_turn(WHERE, "chat5-turn1-update1", "answered")
    # Then one next turn starts, and it takes all four messages, in update_id order
    assert [m.update_id for m in first] == [1]
    assert next_turn == "chat5-turn2-update2" and list(starter.started) == [
        "chat5-turn1-update1",
        "chat5-turn2-update2",
    ]
    second = sequencer.take_batch(WHERE, "chat5-turn2-update2")
    assert [m.update_id for m in second] == [2, 3, 4, 5]
    assert [m.claimed_at for m in second] == sorted(m.claimed_at for m in second)  # type: ignore[type-var]
    # And when it ends with nothing waiting, the chat is free and nothing starts
    assert sequencer.end_turn(WHERE, "chat5-turn2-update2", "answered") is None
    assert sequencer.inbox.holder(WHERE) is None and sequencer.inbox.pending(WHERE) == []


def test_a_retried_take_returns_the_same_messages_and_retried_deliveries_are_duplicates(
    sequencer: Sequencer,
) -> None:
    sequencer.admit(message(1))
    assert sequencer.take_batch(WHERE, "chat5-turn1-update1") == sequencer.take_batch(
        WHERE, "chat5-turn1-update1"
    )
    assert sequencer.admit(message(1)) == "duplicate"  # being answered
    sequencer.end_turn(WHERE, "chat5-turn1-update1", "answered")
    assert sequencer.admit(message(1)) == "duplicate"  # answered


def test_a_turn_never_takes_another_turns_messages(sequencer: Sequencer) -> None:
    sequencer.admit(message(1))
    assert [m.update_id for m in sequencer.take_batch(WHERE, "chat5-turn1-update1")] == [1]
    assert sequencer.take_batch(WHERE, "someone-else") == []


def test_a_group_turn_never_mixes_senders(sequencer: Sequencer) -> None:
    for update_id, user in [(1, 100), (2, 100), (3, 200), (4, 100)]:
        sequencer.admit(message(update_id, user_id=user))
    assert [m.update_id for m in sequencer.take_batch(WHERE, "chat5-turn1-update1")] == [1, 2]
    next_turn = sequencer.end_turn(WHERE, "chat5-turn1-update1", "answered")
    batch = sequencer.take_batch(WHERE, str(next_turn))
    assert [(m.update_id, m.user_id) for m in batch] == [(3, 200)]


def test_a_batch_is_capped_and_the_rest_goes_to_the_next_turn(sequencer: Sequencer) -> None:
    sequencer.max_batch = 3
    for n in range(1, 6):
        sequencer.admit(message(n))
    assert [m.update_id for m in sequencer.take_batch(WHERE, "chat5-turn1-update1")] == [1, 2, 3]
    next_turn = sequencer.end_turn(WHERE, "chat5-turn1-update1", "answered")
    assert [m.update_id for m in sequencer.take_batch(WHERE, str(next_turn))] == [4, 5]


def test_a_parked_turn_lets_the_chat_go_on_and_takes_it_back_after_the_next_turn(
    sequencer: Sequencer, starter: RecordingStarter
) -> None:
    # Given turn 1 waiting on an approval while the user writes again
    sequencer.admit(message(1))
    sequencer.take_batch(WHERE, "chat5-turn1-update1")
    sequencer.admit(message(2))
    # When it parks, the next turn starts for message 2
    assert sequencer.park(WHERE, "chat5-turn1-update1") == "chat5-turn2-update2"
    sequencer.take_batch(WHERE, "chat5-turn2-update2")
    # Then turn 1 cannot take the chat back while turn 2 runs, and can once it ended
    assert not sequencer.retake(WHERE, "chat5-turn1-update1")
    sequencer.end_turn(WHERE, "chat5-turn2-update2", "answered")
    assert sequencer.retake(WHERE, "chat5-turn1-update1")
    # And message 1 stays turn 1's until turn 1 ends
    assert [(m.update_id, m.turn_id) for m in sequencer.inbox.pending(WHERE)] == [(1, "chat5-turn1-update1")]
    sequencer.end_turn(WHERE, "chat5-turn1-update1", "answered")
    assert sequencer.inbox.pending(WHERE) == [] and sequencer.inbox.holder(WHERE) is None


def test_a_lease_whose_turn_died_expires(
    sequencer: Sequencer, starter: RecordingStarter, epoch: Epoch
) -> None:
    sequencer.admit(message(1))  # turn 1 starts and then dies without a trace
    assert sequencer.admit(message(2)) == "queued"
    epoch.now += 61
    assert sequencer.admit(message(3)) == "started"
    assert list(starter.started) == ["chat5-turn1-update1", "chat5-turn2-update3"]


def test_a_failed_turn_gives_its_messages_back_and_they_never_loop_nor_get_lost(sequencer: Sequencer) -> None:
    sequencer.admit(message(1))
    name = "chat5-turn1-update1"
    for attempt in range(sequencer.max_requeues):
        assert [m.update_id for m in sequencer.take_batch(WHERE, name)] == [1]
        next_turn = sequencer.end_turn(WHERE, name, "failed")
        assert next_turn is not None, f"attempt {attempt}: the message is queued again and a turn starts"
        name = next_turn
    assert [m.update_id for m in sequencer.take_batch(WHERE, name)] == [1]
    assert sequencer.end_turn(WHERE, name, "failed") is None, "the last failure starts no turn: no loop"
    assert [(m.update_id, m.status) for m in sequencer.inbox.pending(WHERE)] == [(1, "queued")], "not lost"
    # the user's next message starts a turn, and that turn takes both
    assert sequencer.admit(message(2)) == "started"
    next_name = sequencer.inbox.holder(WHERE)[0]  # type: ignore[index]
    assert [m.update_id for m in sequencer.take_batch(WHERE, next_name)] == [1, 2]


def test_a_start_that_died_after_taking_the_lease_is_redone_by_the_next_hand_over(
    sequencer: Sequencer, starter: RecordingStarter
) -> None:
    sequencer.admit(message(1))
    sequencer.take_batch(WHERE, "chat5-turn1-update1")
    sequencer.admit(message(2))

    class Dies:
        def start(self, name: str, payload: dict[str, object]) -> bool:
            raise ConnectionError("Step Functions unreachable")

    sequencer.starter = Dies()
    with pytest.raises(ConnectionError):
        sequencer.end_turn(
            WHERE, "chat5-turn1-update1", "answered"
        )  # FinishTurn dies; the state machine retries it
    sequencer.starter = starter
    assert sequencer.end_turn(WHERE, "chat5-turn1-update1", "answered") == "chat5-turn2-update2"
    assert (
        sequencer.end_turn(WHERE, "chat5-turn1-update1", "answered") == "chat5-turn2-update2"
    )  # and again: a no-op
    assert list(starter.started) == ["chat5-turn1-update1", "chat5-turn2-update2"]


@pytest.mark.parametrize("seed", range(40))
def test_whatever_the_interleaving_each_message_is_answered_once_by_one_turn_at_a_time(seed: int) -> None:
    """Webhooks and turns race on real threads; each turn takes, answers and hands over."""
    rng = random.Random(seed)
    starter = RecordingStarter()
    sequencer = Sequencer(inbox=InMemoryChatInbox(), starter=starter, lease_seconds=600)
    answered: list[int] = []
    turns_run: set[str] = set()
    active = [0, 0]  # turns running now, most at once
    lock = threading.Lock()
    total = 12

    def run_started_turns() -> None:
        while True:
            with lock:
                waiting = [n for n in starter.started if n not in turns_run]
                if not waiting:
                    return
                name = waiting[0]
                turns_run.add(name)
                active[0] += 1
                active[1] = max(active)
            batch = sequencer.take_batch(WHERE, name)
            with lock:
                answered.extend(m.update_id for m in batch)
                active[0] -= 1
            sequencer.end_turn(WHERE, name, "answered")

    def deliver(update_id: int) -> None:
        for _ in range(rng.choice([1, 1, 2])):  # Telegram sometimes retries
            sequencer.admit(message(update_id))
        run_started_turns()

    threads = [threading.Thread(target=deliver, args=(n,)) for n in range(1, total + 1)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    run_started_turns()
    assert sorted(answered) == list(range(1, total + 1)), "each message answered exactly once"
    assert active[1] == 1, "never two turns of the chat at once"
    assert sequencer.inbox.holder(WHERE) is None and sequencer.inbox.pending(WHERE) == []


def test_a_fired_reminder_is_not_overtaken_by_messages_sent_after_it() -> None:
    def queued(update_id: int, received_at: str, kind: str = "message") -> QueuedMessage:
        return QueuedMessage(
            chat_id=1,
            update_id=update_id,
            user_id=1,
            id=f"m{update_id}",
            text="t",
            received_at=received_at,
            kind=kind,  # type: ignore[arg-type]
        )

    early = queued(5, "2026-11-23T09:00:00.000Z")
    reminder = queued(10**19 + 1, "2026-11-23T09:00:01.000Z", "reminder")
    late = queued(6, "2026-11-23T09:00:02.000Z")
    assert arrival_order([early, late, reminder]) == [early, reminder, late]
    assert arrival_order([late, reminder]) == [reminder, late]
