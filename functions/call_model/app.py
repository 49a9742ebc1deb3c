"""CallModel state: one model call; its route (reply, tools, model, wait) steers the state machine."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.metrics import MetricUnit

from stepwise.lambda_support import prepare_state
from stepwise.runtime import get_runtime
from stepwise.states.call_model import call_model
from stepwise.states.contracts.call_model import CallModelInput
from stepwise.warmups.event import answers_warmups

if TYPE_CHECKING:
    from aws_lambda_powertools.utilities.typing import LambdaContext

    from stepwise.services import TurnServices

logger = Logger()
metrics = Metrics()


# The models a plain turn's first call uses (their validators are built on first use): a warm-up builds them.
FIRST_CALL_MODELS = (
    "stepwise.turn_records.models:TurnMeta",
    "stepwise.turn_records.models:ModelStep",
    "stepwise.turn_records.models:Reply",
    "stepwise.history.models:StoredMessage",
    "stepwise.model.types:ModelResponse",
    "stepwise.states.contracts.call_model:CallModelOutput",
)


def first_call(services: TurnServices) -> object:
    """What the first model call builds: the tools' catalog with their schemas for the API, the Bot API
    client of the drafts."""
    return (
        services.tools.registry.api_tools(),
        services.outbound.drafts() if services.outbound.drafts is not None else None,
    )


USAGE_METRICS = ("input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")


# The webhook starts this container early after a quiet spell (stepwise.warmups.warmer): the settings, the
# model's client (its key read from SSM), the tools' catalog and the event's validator are ready before the
# turn's call arrives.
@answers_warmups(
    prepare=lambda: (prepare_state(CallModelInput, first_call, FIRST_CALL_MODELS), get_runtime().model)
)
@logger.inject_lambda_context(clear_state=True)
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    """Returns the route, the step and the token usage (also published as metrics)."""
    request = CallModelInput.model_validate(
        event
    )  # as `stepwise.aws.events.parsed` does, minus its HTTP models
    logger.append_keys(**request.turn.log_keys())
    result = call_model(request, get_runtime().turn_services)
    for name in USAGE_METRICS:
        metrics.add_metric(name=name, unit=MetricUnit.Count, value=getattr(result, name))
    # Published here, only once there are some: a `log_metrics` decorator also flushes when the call
    # raises (the model unreachable), and Powertools then warns "No application metrics to publish" into
    # the logs of every such invocation (and, in make chat, onto the terminal).
    metrics.flush_metrics()
    return result.model_dump()
