"""Handlers' input: validate the Lambda event with a pydantic model before the handler runs.

This is what Powertools' Parser `event_parser` does for a plain model; importing
`aws_lambda_powertools.utilities.parser` also loads every event model Powertools ships, which costs each cold
start about a third of `import boto3` (see `make bench`), so the handlers use this instead.
"""

from __future__ import annotations

from functools import wraps
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

if TYPE_CHECKING:
    from collections.abc import Callable


def parsed[Event: BaseModel, Result](
    model: type[Event],
) -> Callable[[Callable[[Event, Any], Result]], Callable[[dict[str, Any], Any], Result]]:
    """Decorate a handler `(event: model, context)` so that Lambda can call it with the raw event."""

    def decorate(handler: Callable[[Event, Any], Result]) -> Callable[[dict[str, Any], Any], Result]:
        @wraps(handler)
        def wrapper(event: dict[str, Any], context: Any) -> Result:
            return handler(model.model_validate(event), context)

        return wrapper

    return decorate


class HttpRequest(BaseModel):
    """The fields the webhook reads of an API Gateway HTTP API (payload 2.0) event. Powertools' own models of
    it cost the webhook's cold start more than the rest of the webhook together (see `make bench`)."""

    model_config = ConfigDict(extra="ignore", populate_by_name=True)

    headers: dict[str, str] = Field(default_factory=dict)
    body: str | None = None
    is_base64_encoded: bool = Field(default=False, alias="isBase64Encoded")
