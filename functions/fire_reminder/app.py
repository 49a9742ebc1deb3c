"""EventBridge Scheduler target: a reminder's schedule fired; queue its message for the chat's next turn."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from aws_lambda_powertools import Logger
from pydantic import ValidationError

from stepwise.reminders.firing import fire
from stepwise.reminders.models import FireEvent
from stepwise.runtime import get_runtime

if TYPE_CHECKING:
    from aws_lambda_powertools.utilities.typing import LambdaContext

logger = Logger()


@logger.inject_lambda_context(clear_state=True)
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    """Fire one occurrence of a reminder; an event that is not one is logged and dropped (a retry would not
    make it valid)."""
    try:
        fired = FireEvent.model_validate(event)
    except ValidationError as error:
        logger.error("not a reminder event: ignored", extra={"errors": error.errors(include_input=False)})
        return {"outcome": "ignored"}
    logger.append_keys(chat_id=fired.chat_id, user_id=fired.user_id, reminder_id=fired.reminder_id)
    return {"outcome": fire(fired, get_runtime().fire_services)}
