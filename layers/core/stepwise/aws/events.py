"""Handlers' input: validate the Lambda event with a pydantic model before the handler runs.

This is what Powertools' Parser `event_parser` does for a plain model; importing
`aws_lambda_powertools.utilities.parser` also loads every event model Powertools ships, which a cold start
would wait for (docs/measurements.md), so the handlers use this instead.
"""

import base64
from collections.abc import Callable
from functools import wraps
from typing import Any

from pydantic import BaseModel, ConfigDict, Field


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
    """The fields the webhook reads of an API Gateway HTTP API (payload 2.0) event."""

    model_config = ConfigDict(defer_build=True, extra="ignore", populate_by_name=True)

    headers: dict[str, str] = {}
    body: str | None = None
    is_base64_encoded: bool = Field(default=False, alias="isBase64Encoded")

    def text_body(self) -> str:
        """The body as text: API Gateway base64-encodes bodies it does not take for text (never a 500 for
        a body that is not base64 after all: it reads as empty)."""
        body = self.body or ""
        if not self.is_base64_encoded:
            return body

        try:
            return base64.b64decode(body, validate=True).decode("utf-8", errors="replace")
        except ValueError:  # binascii.Error: not base64 at all
            return ""

    def lower_headers(self) -> dict[str, str]:
        return {name.lower(): value for name, value in self.headers.items()}


class _Http(BaseModel):
    model_config = ConfigDict(defer_build=True, extra="ignore")

    method: str = "POST"
    path: str = "/"


class _RequestContext(BaseModel):
    model_config = ConfigDict(defer_build=True, extra="ignore")

    http: _Http = Field(default_factory=_Http)


class HttpCall(HttpRequest):
    """An HTTP API request with its method (the /mcp endpoint answers more than POST) and its URL's query
    (as sent: the sign-in callback's)."""

    request_context: _RequestContext = Field(default_factory=_RequestContext, alias="requestContext")
    raw_query_string: str = Field(default="", alias="rawQueryString")

    @property
    def method(self) -> str:
        return self.request_context.http.method

    @property
    def path(self) -> str:
        return self.request_context.http.path
