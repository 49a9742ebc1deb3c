"""The one shape every state handler has: parse the event with a pydantic model, log with the turn's ids,
call the core with the runtime's services, return the result as a plain dict."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from stepwise.runtime import get_runtime
from stepwise.states.contracts.base import TurnInput
from stepwise.warmup_event import answers_warmups

if TYPE_CHECKING:
    from collections.abc import Callable

    from aws_lambda_powertools import Logger
    from aws_lambda_powertools.utilities.typing import LambdaContext

    from stepwise.states.services import TurnServices


def state_handler[Event: TurnInput](
    model: type[Event],
    logic: Callable[[Event, TurnServices], BaseModel],
    logger: Logger,
    prepare: Callable[[TurnServices], object] | None = None,
) -> Callable[[dict[str, Any], LambdaContext], dict[str, Any]]:
    """A Lambda handler for one state of the turn; a warm-up prepares its services (and `prepare`'s)."""

    @answers_warmups(prepare=lambda: prepare_state(model, prepare))
    @logger.inject_lambda_context(clear_state=True)
    def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
        parsed = model.model_validate(event)  # what Powertools Parser does, without its import cost
        logger.append_keys(**parsed.turn.log_keys())
        return logic(parsed, get_runtime().turn_services).model_dump()

    return handler


def prepare_state(model: type[BaseModel], prepare: Callable[[TurnServices], object] | None = None) -> None:
    """A warm-up's preparation of a state's container: the runtime's services (settings, SDK clients; no
    request is made), what `prepare` builds of them, the event model's validator and the TLS context of the
    Bot API and model clients, built now rather than by the turn's first call."""
    from stepwise.http_transport import verified_tls_context

    services = get_runtime().turn_services
    if prepare is not None:
        prepare(services)
    model.model_rebuild()
    verified_tls_context()  # certifi's bundle, read once per process: now, not by the first HTTPS request
