"""SendError state: the model failed after its retries; tell the user and end the turn cleanly."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools import Logger
from aws_lambda_powertools.utilities.parser import event_parser
from aws_lambda_powertools.utilities.typing import LambdaContext

from stepwise.runtime import get_runtime
from stepwise.turn.contracts import SendErrorInput
from stepwise.turn.deliver import deliver_error

logger = Logger()


@logger.inject_lambda_context(clear_state=True)
@event_parser(model=SendErrorInput)
def handler(event: SendErrorInput, context: LambdaContext) -> dict[str, Any]:
    """Returns how the error reply was delivered."""
    logger.append_keys(**event.turn.log_keys())
    return deliver_error(event, get_runtime().turn_services).model_dump()
