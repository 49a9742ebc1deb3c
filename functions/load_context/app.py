"""LoadContext state: store the user's message, fix the history window, show "typing"."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools import Logger
from aws_lambda_powertools.utilities.parser import event_parser
from aws_lambda_powertools.utilities.typing import LambdaContext

from stepwise.runtime import get_runtime
from stepwise.turn.contracts import TurnStart
from stepwise.turn.load_context import load_context

logger = Logger()


@logger.inject_lambda_context(clear_state=True)
@event_parser(model=TurnStart)
def handler(event: TurnStart, context: LambdaContext) -> dict[str, Any]:
    """Returns the stored message's id and the size of the context window."""
    logger.append_keys(**event.turn.log_keys())
    return load_context(event, get_runtime().turn_services).model_dump()
