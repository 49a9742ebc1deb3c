"""The one shape every state handler has: parse the event with a pydantic model, log with the turn's ids,
call the core with the runtime's services, return the result as a plain dict."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from stepwise.runtime import get_runtime
from stepwise.states.contracts import TurnInput
from stepwise.warmup import answers_warmups

if TYPE_CHECKING:
    from collections.abc import Callable

    from aws_lambda_powertools import Logger
    from aws_lambda_powertools.utilities.typing import LambdaContext

    from stepwise.states.services import TurnServices


def state_handler[Event: TurnInput](
    model: type[Event], logic: Callable[[Event, TurnServices], BaseModel], logger: Logger
) -> Callable[[dict[str, Any], LambdaContext], dict[str, Any]]:
    """A Lambda handler for one state of the turn."""

    @answers_warmups(prepare=lambda: prepare_state(model))
    @logger.inject_lambda_context(clear_state=True)
    def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
        parsed = model.model_validate(event)  # what Powertools Parser does, without its import cost
        logger.append_keys(**parsed.turn.log_keys())
        return logic(parsed, get_runtime().turn_services).model_dump()

    return handler


def prepare_state(model: type[BaseModel]) -> None:
    """A warm-up's preparation of a state's container: the runtime's services (settings, SDK clients; no
    request is made) and the event model's validator, built now rather than by the turn's first call."""
    get_runtime().turn_services  # noqa: B018 (built for its side effect: the cached services)
    model.model_rebuild()
