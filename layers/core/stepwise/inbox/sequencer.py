"""One turn at a time per conversation (a chat, or one topic of it: topics run side by side and are never
folded together): admit a message, take a batch, hand the conversation on.

The webhook stores each message in the chat's inbox and then tries to take the chat's lease; only the
lease holder's turn runs. A running turn takes every queued message of the chat (a burst is answered once).
When it ends, or parks on an approval, it releases the lease and then looks at the inbox again: anything
still queued starts the next turn. Because the webhook writes before it tries the lease, and a turn releases
before it looks, a message can never fall between the two (see docs/reliability.md, "Ordering").
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Literal

from stepwise.telegram.commands import is_command
from stepwise.turn.ids import iso_utc, utc_now
from stepwise.turn.ref import TurnRef
from stepwise.turn.start import Limits, TurnStart

if TYPE_CHECKING:
    from collections.abc import Callable

    from stepwise.inbox.models import NewLease, QueuedMessage
    from stepwise.inbox.store import ChatInbox
    from stepwise.telegram.conversation import Conversation
    from stepwise.turn.workflow import TurnStarter

logger = logging.getLogger(__name__)

Admitted = Literal["started", "queued", "duplicate"]


@dataclass(frozen=True)
class Admission:
    """What admitting a message did; for a turn it started, how long the chat had gone without one (seconds;
    None for the chat's first turn)."""

    action: Admitted
    idle_seconds: int | None = None


Ending = Literal["answered", "failed"]
DAY = 86_400


@dataclass(eq=False, repr=False)
class Sequencer:
    """The per-chat inbox and lease, and the way turns are started from them."""

    inbox: ChatInbox
    starter: TurnStarter
    lease_seconds: int = 900
    approval_timeout_seconds: int = 3600
    secretary_wait_seconds: int = (
        24 * 3600
    )  # a suggested reply's wait (a contact's chat in a business account)
    max_batch: int = 20
    max_requeues: int = 2  # turns a message may fail before it waits for the user's next message
    inbox_ttl_seconds: int = 7 * DAY
    done_ttl_seconds: int = 2 * DAY
    clock: Callable[[], datetime] = field(default=utc_now)
    epoch: Callable[[], float] = field(default=time.time)

    def admit(self, message: QueuedMessage) -> Admitted:
        """Keep the message, then start a turn unless the chat is busy (its running turn will take it)."""
        return self.admission(message).action

    def admission(self, message: QueuedMessage) -> Admission:
        """`admit`, also saying how long the chat was quiet before a turn it started (for warm-ups)."""
        now = int(self.epoch())
        found = self.inbox.enqueue(message, now + self.inbox_ttl_seconds)
        if found in ("taken", "done"):
            return Admission("duplicate")
        lease = self._start_new(message.conversation, message)
        if lease is not None:
            idle = None if lease.previous_start is None else max(0, now - lease.previous_start)
            return Admission("started", idle)
        if found == "queued":  # a retried delivery: perhaps the start that took the lease never happened
            self._nudge(message.conversation, message)
        return Admission("queued")

    def take_batch(self, conversation: Conversation, turn_id: str) -> list[QueuedMessage]:
        """The messages this turn answers: those it took already, then the leading run of queued messages
        from one sender (a group chat never mixes senders in one turn), in update_id order. A reminder that
        fired and a slash command are each a turn of their own."""
        batch: list[QueuedMessage] = []
        sender: int | None = None
        now = self.clock()
        for message in arrival_order(self.inbox.pending(conversation)):
            if message.status == "taken" and message.turn_id != turn_id:
                continue  # another turn's (running, parked, or failed before it could give it back)
            if sender is None:
                sender = message.user_id
            if message.user_id != sender or len(batch) >= self.max_batch:
                break
            if batch and (alone(message) or alone(batch[0])):
                break
            claimed_at = iso_utc(now + timedelta(milliseconds=len(batch)))
            taken = self.inbox.take(message, turn_id, claimed_at)
            if taken is not None:
                batch.append(taken)
        return batch

    def end_turn(self, conversation: Conversation, turn_id: str, ending: Ending) -> str | None:
        """The turn is over: its messages are done (or queued again, when it failed before answering them),
        the lease is released, and the next turn starts if messages wait. Returns the next turn's name."""
        for message in self.inbox.pending(conversation):
            if message.turn_id != turn_id:
                continue
            if ending == "failed":
                self.inbox.give_back(message)
            else:
                self.inbox.finish(message, int(self.epoch()) + self.done_ttl_seconds)
        return self.park(conversation, turn_id)

    def park(self, conversation: Conversation, turn_id: str) -> str | None:
        """Let the chat go on without this turn (it waits for an approval, or it ended)."""
        self.inbox.release(conversation, turn_id)
        return self.start_next(conversation)

    def retake(self, conversation: Conversation, turn_id: str) -> bool:
        """A parked turn asks for the chat back; False while another turn runs."""
        return self.inbox.reacquire(conversation, turn_id, int(self.epoch()), self.lease_seconds)

    def start_next(self, conversation: Conversation) -> str | None:
        """Start a turn for the oldest queued message, if any; returns the name of the turn that takes it.

        Messages that failed `max_requeues` turns already do not start another one by themselves (no loop
        while DynamoDB or the model is down for good): they stay queued and go with the user's next message.
        """
        queued = [m for m in self.inbox.pending(conversation) if m.status == "queued"]
        if not any(m.requeues <= self.max_requeues for m in queued):
            return None
        head = queued[0]
        lease = self._start_new(conversation, head)
        return lease.name if lease is not None else self._nudge(conversation, head)

    def _start_new(self, conversation: Conversation, head: QueuedMessage) -> NewLease | None:
        """Take the free lease for a new turn and start it; None when the chat is busy."""
        lease = self.inbox.acquire_new(conversation, head.update_id, int(self.epoch()), self.lease_seconds)
        if lease is not None:
            self._start(lease.name, head)
        return lease

    def _nudge(self, conversation: Conversation, head: QueuedMessage) -> str | None:
        """Make sure the lease holder's turn exists: a start that crashed after taking the lease is redone
        (execution names make this a no-op for a turn that runs or ran)."""
        holder = self.inbox.holder(conversation)
        if holder is None:
            return None
        self._start(holder[0], head)
        return holder[0]

    def _start(self, name: str, head: QueuedMessage) -> None:
        start = TurnStart(
            turn=TurnRef(
                turn_id=name,
                chat_id=head.chat_id,
                topic=head.topic,
                account=head.account,
                user_id=head.user_id,
                update_id=head.update_id,
            ),
            limits=Limits(
                approval_timeout_seconds=self.secretary_wait_seconds
                if head.account is not None
                else self.approval_timeout_seconds
            ),
        )
        started = self.starter.start(name, start.model_dump(exclude_none=True))
        logger.info(
            "turn started" if started else "turn exists already",
            extra={
                "turn_id": name,
                "chat_id": head.chat_id,
                "topic": head.topic,
                "account": head.account,
                "update_id": head.update_id,
            },
        )


def alone(message: QueuedMessage) -> bool:
    """A reminder that fired and a slash command are each a turn of their own (a command is never folded into
    a burst the model answers)."""
    if message.written and not message.typed:  # a contact's "/reset" is text: their burst folds whole
        return False
    return not message.typed or is_command(message.text)


def arrival_order(pending: list[QueuedMessage]) -> list[QueuedMessage]:
    """Typed messages in update_id order (Telegram's), with fired reminders placed among them by the time
    they arrived: a reminder is not overtaken by messages the user sent after it fired."""
    typed = [m for m in pending if m.written]
    fired = [m for m in pending if not m.written]
    ordered: list[QueuedMessage] = []
    while typed and fired:
        ordered.append(fired.pop(0) if fired[0].received_at < typed[0].received_at else typed.pop(0))
    return ordered + typed + fired
