"""The Anthropic Messages API adapter. `anthropic` is imported on first use: it is slow to import."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools import Logger

from stepwise.model.errors import ModelPermanentError, ModelRateLimitedError, ModelTransientError
from stepwise.model.rate_limits import RATE_LIMIT_STATUS, retry_after_seconds
from stepwise.model.types import ModelRequest, ModelResponse, TextSink, Usage
from stepwise.model.web import SERVER_BLOCK_TYPES, WEB_FETCH_BETA, uses_web_fetch

logger = Logger(child=True)

TRANSIENT_STATUS = {408, 409, 429, 500, 502, 503, 504, 529}
PERMANENT_ERROR_TYPES = {
    "invalid_request_error",
    "authentication_error",
    "permission_error",
    "not_found_error",
}
KEYLESS_PLACEHOLDER = "not-needed"  # compatible endpoints such as a local Ollama ignore the key
# A long server-tool turn (web search) may stop with `pause_turn`: the paused content is sent back as the
# assistant's message and the model goes on. At most this many continuations per model step.
MAX_CONTINUATIONS = 3


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
        """One model step; with `on_text` it is streamed (see `anthropic_stream`) and its text passed on. A
        response that stops with `pause_turn` is continued (its content sent back unchanged) up to
        MAX_CONTINUATIONS times; the step's content and usage are those of all its calls."""
        kwargs: dict[str, Any] = {
            "model": request.model,
            "max_tokens": request.max_tokens,
            "system": request.system,
            "messages": request.messages,
        }
        if request.tools:
            kwargs["tools"] = request.tools
            if uses_web_fetch(request.tools):
                kwargs["extra_headers"] = {"anthropic-beta": WEB_FETCH_BETA}
        if request.tool_choice:
            kwargs["tool_choice"] = request.tool_choice
        content: list[dict[str, Any]] = []
        usage = Usage()
        for _ in range(MAX_CONTINUATIONS + 1):
            message = self._call(kwargs, on_text)
            content.extend(plain for block in message.content if (plain := _plain_block(block)))
            usage = usage.plus(_usage(message.usage))
            stop_reason = message.stop_reason or "end_turn"
            if stop_reason != "pause_turn" or not content:
                break
            kwargs["messages"] = [*request.messages, {"role": "assistant", "content": list(content)}]
        return ModelResponse(content=content, stop_reason=stop_reason, model=message.model, usage=usage)

    def _call(self, kwargs: dict[str, Any], on_text: TextSink | None) -> Any:
        """One Messages API call, its errors mapped to the model port's."""
        import anthropic

        try:
            if on_text is None:
                return self._sdk().messages.create(**kwargs)
            from stepwise.model.anthropic_stream import stream_message

            return stream_message(self._sdk(), kwargs, on_text, self._timeout)
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


def _usage(usage: Any) -> Usage:
    """The call's token counts, and its web searches and fetches (`usage.server_tool_use`)."""
    server = getattr(usage, "server_tool_use", None)
    return Usage(
        input_tokens=usage.input_tokens or 0,
        output_tokens=usage.output_tokens or 0,
        cache_read_input_tokens=getattr(usage, "cache_read_input_tokens", None) or 0,
        cache_creation_input_tokens=getattr(usage, "cache_creation_input_tokens", None) or 0,
        web_search_requests=getattr(server, "web_search_requests", None) or 0,
        web_fetch_requests=getattr(server, "web_fetch_requests", None) or 0,
    )


def _plain_block(block: Any) -> dict[str, Any] | None:
    """Keep only what a later request may send back (non-empty text, with its citations; tool_use; the web
    tools' blocks), as plain JSON."""
    if block.type == "text":
        if not block.text:
            return None
        citations = getattr(block, "citations", None)
        if citations:
            return {
                "type": "text",
                "text": block.text,
                "citations": [c.to_dict(mode="json") for c in citations],
            }
        return {"type": "text", "text": block.text}
    if block.type == "tool_use":
        return {"type": "tool_use", "id": block.id, "name": block.name, "input": dict(block.input or {})}
    if block.type in SERVER_BLOCK_TYPES:  # sent back exactly as received (the fields the API gave)
        return dict(block.to_dict(mode="json", exclude_unset=True))
    logger.info("dropping unsupported content block", extra={"block_type": block.type})
    return None


def _error_type(body: object) -> str:
    """The `error.type` of an error body (`{"type": "error", "error": {"type": ...}}`), or ""."""
    error = body.get("error") if isinstance(body, dict) else None
    return str(error.get("type", "")) if isinstance(error, dict) else ""


def _short(text: str, limit: int = 300) -> str:
    return text if len(text) <= limit else text[:limit] + "…"
