"""The recovery of a turn whose execution failed, timed out or was stopped (an EventBridge rule calls
RecoverChat): its chat is freed and its messages are still answered."""

import logging
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict, Field

from stepwise.states.contracts.finish_turn import FinishTurnOutput
from stepwise.states.new_token import deliver_new_token
from stepwise.states.policy import policy_for
from stepwise.turn.ref import TurnRef
from stepwise.turn.start import TurnStart
from stepwise.turn_records.models import NewToken

if TYPE_CHECKING:
    from stepwise.services import TurnServices

logger = logging.getLogger(__name__)


class ExecutionEnded(BaseModel):
    """The detail of a "Step Functions Execution Status Change" event for an unfinished turn."""

    model_config = ConfigDict(defer_build=True, extra="ignore")

    executionArn: str
    name: str
    status: Literal["FAILED", "TIMED_OUT", "ABORTED"]
    input: str

    def turn(self) -> TurnRef:
        """The turn the execution ran: its input's turn, named after the execution."""
        return TurnStart.model_validate_json(self.input).turn.model_copy(update={"turn_id": self.name})


class ExecutionEndedEvent(BaseModel):
    """The EventBridge event the recovery rule delivers (the fields used of it)."""

    model_config = ConfigDict(defer_build=True, extra="ignore", populate_by_name=True)

    source: Literal["aws.states"]
    detail_type: Literal["Step Functions Execution Status Change"] = Field(alias="detail-type")
    detail: ExecutionEnded


def recover_turn(turn: TurnRef, status: str, services: "TurnServices") -> FinishTurnOutput:
    """An execution ended without finishing its turn. If its reply reached the user, its messages are done;
    otherwise they are queued again (a bounded number of times) so that the next turn answers them. Either
    way the chat is freed and the next turn starts. A reply with a new token is settled first (its seed
    forgotten, its connection revoked if the token never reached the chat: `states.new_token`). A background
    job's execution holds no chat: its report says how it ended (`states.job_report`)."""
    if (recovered := policy_for(turn).recover(turn, status, services)) is not None:
        return recovered
    reply = services.stores.turns.get_reply(turn.turn_id)
    if reply is not None and isinstance(reply.extra, NewToken):
        reply = deliver_new_token(turn, reply, services, deliver=False)  # its seed forgotten, or revoked
    answered = reply is not None and reply.sent_chunks > 0
    next_turn = services.outbound.sequencer().end_turn(
        turn.conversation, turn.turn_id, "answered" if answered else "failed"
    )
    logger.warning(
        "recovered a turn that did not finish",
        extra={"status": status, "answered": answered, "next_turn": next_turn},
    )
    return FinishTurnOutput(next_turn=next_turn)
