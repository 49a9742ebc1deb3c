"""Telegram webhook (API Gateway HTTP API): authenticate, filter and start one turn per update."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from aws_lambda_powertools import Logger
from aws_lambda_powertools.metrics import MetricUnit, single_metric

from stepwise.aws.events import HttpRequest, parsed
from stepwise.runtime import get_runtime
from stepwise.webhook import ACTION_HEADER, SECRET_HEADER, WebhookOutcome, handle_update

if TYPE_CHECKING:
    from aws_lambda_powertools.utilities.typing import LambdaContext

logger = Logger()


def count_invalid_update() -> None:
    """One `InvalidUpdates` metric (EMF), written only when there is one to count (a `log_metrics` decorator
    would warn about an empty set on every other request)."""
    with single_metric(name="InvalidUpdates", unit=MetricUnit.Count, value=1):
        pass  # the metric is written (to the log, as EMF) when the block ends


@logger.inject_lambda_context(clear_state=True)
@parsed(HttpRequest)
def handler(event: HttpRequest, context: LambdaContext) -> dict[str, Any]:
    """Answer Telegram at once; the turn runs in Step Functions."""
    secret = event.lower_headers().get(SECRET_HEADER)
    outcome = handle_update(secret, event.text_body(), get_runtime().webhook_services)
    logger.append_keys(update_id=outcome.update_id, chat_id=outcome.chat_id)
    logger.info("webhook handled", extra={"action": outcome.action, "status": outcome.status})
    if outcome.action == "invalid":  # answered 200 so Telegram drops it; counted so that it is seen
        count_invalid_update()
    return http_answer(outcome)


def http_answer(outcome: WebhookOutcome) -> dict[str, Any]:
    """The HTTP answer: what the webhook did (its action, also in a header), or, when the message should show
    "typing…", that Bot API call for Telegram to make (Telegram reads a `method` in a webhook's answer)."""
    headers = {"content-type": "application/json", ACTION_HEADER: outcome.action}
    if outcome.typing and outcome.chat_id is not None:
        call: dict[str, Any] = {"method": "sendChatAction", "chat_id": outcome.chat_id, "action": "typing"}
        if outcome.topic is not None:  # in the message's topic ("typing…" shows there)
            call["message_thread_id"] = outcome.topic
        body = json.dumps(call)
    else:
        body = outcome.model_dump_json(include={"action", "detail"})
    return {"statusCode": outcome.status, "headers": headers, "body": body}
