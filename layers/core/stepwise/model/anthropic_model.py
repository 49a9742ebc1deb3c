"""The Anthropic Messages API adapter. `anthropic` is imported on first use: it is slow to import."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools import Logger

from stepwise.model.errors import ModelPermanentError, ModelRateLimitedError, ModelTransientError
from stepwise.model.rate_limits import RATE_LIMIT_STATUS, retry_after_seconds
from stepwise.model.types import ModelRequest, ModelResponse, TextSink, Usage

logger = Logger(child=True)

TRANSIENT_STATUS = {408, 409, 429, 500, 502, 503, 504, 529}
PERMANENT_ERROR_TYPES = {
    "invalid_request_error",
    "authentication_error",
    "permission_error",
    "not_found_error",
}
KEYLESS_PLACEHOLDER = "not-needed"  # compatible endpoints such as a local Ollama ignore the key


class AnthropicModel:
    """ChatModel on Anthropic's SDK. SDK retries stay low: the state machine owns retries with backoff."""

    def __init__(
        self, api_key: str | None, base_url: str | None, timeout_seconds: float, max_retries: int
    ) -> None:
        self._api_key = api_key or KEYLESS_PLACEHOLDER
        self._base_url = base_url
        self._timeout = timeout_seconds
        self._max_retries = max_retries
        self._client: Any = None

    def _sdk(self) -> Any:
        if self._client is None:
            import anthropic

            self._client = anthropic.Anthropic(
                api_key=self._api_key,
                base_url=self._base_url,
                timeout=self._timeout,
                max_retries=self._max_retries,
            )
        return self._client

    def complete(self, request: ModelRequest, on_text: TextSink | None = None) -> ModelResponse:
        """One call; with `on_text` it is streamed (see `anthropic_stream`) and its text passed on."""
        import anthropic

        kwargs: dict[str, Any] = {
            "model": request.model,
            "max_tokens": request.max_tokens,
            "system": request.system,
            "messages": request.messages,
        }
        if request.tools:
            kwargs["tools"] = request.tools
        if request.tool_choice:
            kwargs["tool_choice"] = request.tool_choice
        try:
            if on_text is None:
                message = self._sdk().messages.create(**kwargs)
            else:
                from stepwise.model.anthropic_stream import stream_message

                message = stream_message(self._sdk(), kwargs, on_text, self._timeout)
        except (anthropic.APITimeoutError, anthropic.APIConnectionError) as error:
            raise ModelTransientError(f"model API unreachable: {type(error).__name__}") from error
        except anthropic.APIStatusError as error:
            if (
                error.status_code < 400
            ):  # an `error` event in a stream that began with 200 (overloaded_error...)
                detail = f"model stream sent an error: {_short(error.message)}"
                if _error_type(error.body) in PERMANENT_ERROR_TYPES:
                    raise ModelPermanentError(detail) from error
                raise ModelTransientError(detail) from error
            detail = f"model API answered HTTP {error.status_code}: {_short(error.message)}"
            retry_after = retry_after_seconds(error.response.headers)
            if error.status_code in RATE_LIMIT_STATUS and retry_after is not None:
                raise ModelRateLimitedError(
                    f"{detail} (retry after {retry_after:g} s)", retry_after
                ) from error
            if error.status_code in TRANSIENT_STATUS or error.status_code >= 500:
                raise ModelTransientError(detail) from error
            raise ModelPermanentError(detail) from error
        usage = message.usage
        return ModelResponse(
            content=[plain for block in message.content if (plain := _plain_block(block))],
            stop_reason=message.stop_reason or "end_turn",
            model=message.model,
            usage=Usage(
                input_tokens=usage.input_tokens or 0,
                output_tokens=usage.output_tokens or 0,
                cache_read_input_tokens=getattr(usage, "cache_read_input_tokens", None) or 0,
                cache_creation_input_tokens=getattr(usage, "cache_creation_input_tokens", None) or 0,
            ),
        )


def _plain_block(block: Any) -> dict[str, Any] | None:
    """Keep only what a later request may send back (non-empty text and tool_use), as plain JSON."""
    if block.type == "text":
        return {"type": "text", "text": block.text} if block.text else None
    if block.type == "tool_use":
        return {"type": "tool_use", "id": block.id, "name": block.name, "input": dict(block.input or {})}
    logger.info("dropping unsupported content block", extra={"block_type": block.type})
    return None


def _error_type(body: object) -> str:
    """The `error.type` of an error body (`{"type": "error", "error": {"type": ...}}`), or ""."""
    error = body.get("error") if isinstance(body, dict) else None
    return str(error.get("type", "")) if isinstance(error, dict) else ""


def _short(text: str, limit: int = 300) -> str:
    return text if len(text) <= limit else text[:limit] + "…"
