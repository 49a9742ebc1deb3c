"""SaveTurn state: store the assistant's message with its tool calls."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools import Logger
from aws_lambda_powertools.utilities.parser import event_parser
from aws_lambda_powertools.utilities.typing import LambdaContext

from stepwise.runtime import get_runtime
from stepwise.turn.contracts import TurnInput
from stepwise.turn.save_turn import save_turn

logger = Logger()


@logger.inject_lambda_context(clear_state=True)
@event_parser(model=TurnInput)
def handler(event: TurnInput, context: LambdaContext) -> dict[str, Any]:
    """Returns whether a message was stored."""
    logger.append_keys(**event.turn.log_keys())
    return save_turn(event, get_runtime().turn_services).model_dump()
