"""SendReply state: deliver the turn's reply (split, HTML with a plain-text fallback)."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools import Logger
from aws_lambda_powertools.utilities.parser import event_parser
from aws_lambda_powertools.utilities.typing import LambdaContext

from stepwise.runtime import get_runtime
from stepwise.turn.contracts import TurnInput
from stepwise.turn.deliver import deliver_reply

logger = Logger()


@logger.inject_lambda_context(clear_state=True)
@event_parser(model=TurnInput)
def handler(event: TurnInput, context: LambdaContext) -> dict[str, Any]:
    """Returns how many chunks were sent."""
    logger.append_keys(**event.turn.log_keys())
    return deliver_reply(event.turn, get_runtime().turn_services).model_dump()
