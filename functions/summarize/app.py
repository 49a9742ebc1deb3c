"""Summarize (scheduled): fold older history of the due chats into rolling summaries in long-term memory."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from aws_lambda_powertools import Logger

from stepwise.aws.events import parsed
from stepwise.memory.summarizer import SummarizeInput, summarize_chats
from stepwise.runtime import get_runtime

if TYPE_CHECKING:
    from aws_lambda_powertools.utilities.typing import LambdaContext

logger = Logger()


@logger.inject_lambda_context(clear_state=True)
@parsed(SummarizeInput)
def handler(event: SummarizeInput, context: LambdaContext) -> dict[str, Any]:
    """Returns how many chats were visited and summarized; fails (to be retried) if any chat failed."""
    return summarize_chats(event, get_runtime().summarize_services).model_dump()
