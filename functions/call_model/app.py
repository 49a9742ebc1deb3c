"""CallModel state: one model call; its route (reply, tools, model, wait) steers the state machine."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.typing import LambdaContext

from stepwise.events import parsed
from stepwise.runtime import get_runtime
from stepwise.states.call_model import call_model
from stepwise.states.contracts import CallModelInput

logger = Logger()
metrics = Metrics()

USAGE_METRICS = ("input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")


@logger.inject_lambda_context(clear_state=True)
@metrics.log_metrics
@parsed(CallModelInput)
def handler(event: CallModelInput, context: LambdaContext) -> dict[str, Any]:
    """Returns the route, the step and the token usage (also published as metrics)."""
    logger.append_keys(**event.turn.log_keys())
    result = call_model(event, get_runtime().turn_services)
    for name in USAGE_METRICS:
        metrics.add_metric(name=name, unit=MetricUnit.Count, value=getattr(result, name))
    return result.model_dump()
