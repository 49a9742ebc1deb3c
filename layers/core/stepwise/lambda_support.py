"""The one shape every state handler has: parse the event with a pydantic model, log with the turn's ids,
call the core with the runtime's services, return the result as a plain dict."""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from stepwise.aws.http_transport import verified_tls_context
from stepwise.runtime import get_runtime
from stepwise.states.contracts.base import TurnInput
from stepwise.warmups.event import answers_warmups

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from aws_lambda_powertools import Logger
    from aws_lambda_powertools.utilities.typing import LambdaContext

    from stepwise.services import TurnServices


def state_handler[Event: TurnInput](
    model: type[Event],
    logic: Callable[[Event, TurnServices], BaseModel],
    logger: Logger,
    prepare: Callable[[TurnServices], object] | None = None,
    models: Sequence[str] = (),
) -> Callable[[dict[str, Any], LambdaContext], dict[str, Any]]:
    """A Lambda handler for one state of the turn; a warm-up prepares its services (and `prepare`'s) and
    builds the validators of `models` (see `build_models`)."""

    @answers_warmups(prepare=lambda: prepare_state(model, prepare, models))
    @logger.inject_lambda_context(clear_state=True)
    def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
        parsed = model.model_validate(event)  # what Powertools Parser does
        logger.append_keys(**parsed.turn.log_keys())
        return logic(parsed, get_runtime().turn_services).model_dump()

    return handler


def prepare_state(
    model: type[BaseModel],
    prepare: Callable[[TurnServices], object] | None = None,
    models: Sequence[str] = (),
) -> None:
    """A warm-up's preparation of a state's container: the runtime's services (settings, SDK clients; no
    request is made), what `prepare` builds of them, the validators of the event model and of `models`, and
    the TLS context of the Bot API and model clients, built now rather than by the turn's first call."""
    services = get_runtime().turn_services
    if prepare is not None:
        prepare(services)
    model.model_rebuild()
    build_models(models)
    verified_tls_context()  # certifi's bundle, read once per process: now, not by the first HTTPS request


def build_models(models: Sequence[str]) -> None:
    """Build the validators and serializers of these models (`module:Class`) now. Stepwise's models defer
    that work (`defer_build`) to their first use; a state
    lists the models its first call of a plain turn uses, and its warm-up builds them ahead of that call."""
    for path in models:
        model_at(path).model_rebuild()


def model_at(path: str) -> type[BaseModel]:
    """The model a `module:Class` path names (the module imported now if it was not yet)."""
    module, _, name = path.partition(":")
    found: type[BaseModel] = getattr(import_module(module), name)
    return found
