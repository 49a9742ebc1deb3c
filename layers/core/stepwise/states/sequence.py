"""Passing a chat from turn to turn at the end of a turn (FinishTurn's last step). A turn whose execution
failed, timed out or was stopped is recovered by `stepwise.states.recovery`; a turn back from its approval
wait takes the chat back in RunTools (`states.run_tools.retake_chat`)."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from stepwise.inbox.sequencer import Ending
    from stepwise.services import Outbound
    from stepwise.turn.ref import TurnRef

logger = logging.getLogger(__name__)


def end_turn(turn: TurnRef, ending: Ending, outbound: Outbound) -> str | None:
    """The turn is over: its messages are done ("answered"), or queued again ("failed": a turn whose
    LoadContext never completed, a bounded number of times, so the next turn answers them); the chat is free
    and the next turn starts if any wait. Returns the next turn's name."""
    next_turn = outbound.sequencer().end_turn(turn.conversation, turn.turn_id, ending)
    logger.info("turn finished", extra={"ending": ending, "next_turn": next_turn})
    return next_turn
