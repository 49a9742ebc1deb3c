"""EventBridge rule target: a turn execution failed, timed out or was stopped; free its chat and make sure
its messages (and those queued behind it) are still answered."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from aws_lambda_powertools import Logger

from stepwise.aws.events import parsed
from stepwise.runtime import get_runtime
from stepwise.states.recovery import ExecutionEndedEvent, recover_turn

if TYPE_CHECKING:
    from aws_lambda_powertools.utilities.typing import LambdaContext

logger = Logger()


@logger.inject_lambda_context(clear_state=True)
@parsed(ExecutionEndedEvent)
def handler(event: ExecutionEndedEvent, context: LambdaContext) -> dict[str, Any]:
    """Recover the turn of one "Step Functions Execution Status Change" event."""
    turn = event.detail.turn()
    logger.append_keys(**turn.log_keys())
    return recover_turn(turn, event.detail.status, get_runtime().turn_services).model_dump()
