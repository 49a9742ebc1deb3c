"""The model port on Anthropic's SDK: the reference the contract tests hold `MessagesApiModel` to.

This was Stepwise's adapter (`AnthropicModel` and its streaming helper) until the hot path moved to the lean
client in `stepwise.model.messages_api` (the SDK's import alone costs about five times `import boto3`). It
stays, unchanged in behaviour, so that tests/contract can send the same requests and responses through both
and assert they agree. Only the tests import it.
"""

from __future__ import annotations

import time
from typing import Any

import anthropic
import httpx2

from stepwise.model.errors import ModelPermanentError, ModelRateLimitedError, ModelTransientError
from stepwise.model.rate_limits import RATE_LIMIT_STATUS, retry_after_seconds
from stepwise.model.types import ModelRequest, ModelResponse, TextSink, Usage
from stepwise.model.web import SERVER_BLOCK_TYPES, WEB_FETCH_BETA, uses_web_fetch

# The reference keeps its own copies of the rules (not the lean client's), so that a change there shows here.
TRANSIENT_STATUS = {408, 409, 429, 500, 502, 503, 504, 529}
PERMANENT_ERROR_TYPES = {
    "invalid_request_error",
    "authentication_error",
    "permission_error",
    "not_found_error",
}
KEYLESS_PLACEHOLDER = "not-needed"
MAX_CONTINUATIONS = 3


class SdkModel:
    """ChatModel on Anthropic's SDK (`messages.create`, `messages.stream`). `http_client` replaces the SDK's
    own (a test's in-process transport)."""

    def __init__(
        self,
        api_key: str | None,
        base_url: str | None,
        timeout_seconds: float,
        max_retries: int,
        *,
        http_client: httpx2.Client | None = None,
    ) -> None:
        self._api_key = api_key or KEYLESS_PLACEHOLDER
        self._base_url = base_url
        self._timeout = timeout_seconds
        self._max_retries = max_retries
        self._http_client = http_client
        self._client: anthropic.Anthropic | None = None

    def sdk(self) -> anthropic.Anthropic:
        """The SDK's client, made on first use."""
        if self._client is None:
            self._client = anthropic.Anthropic(
                api_key=self._api_key,
                base_url=self._base_url,
                timeout=self._timeout,
                max_retries=self._max_retries,
                http_client=self._http_client,
            )
        return self._client

    def complete(self, request: ModelRequest, on_text: TextSink | None = None) -> ModelResponse:
        """One model step; with `on_text` it is streamed and its text passed on. A response that stops with
        `pause_turn` is continued (its content sent back unchanged) up to MAX_CONTINUATIONS times; the step's
        content and usage are those of all its calls."""
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
        try:
            if on_text is None:
                return self.sdk().messages.create(**kwargs)
            return stream_message(self.sdk(), kwargs, on_text, self._timeout)
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


def stream_message(
    client: anthropic.Anthropic, kwargs: dict[str, Any], on_text: TextSink, timeout_seconds: float
) -> Any:
    """The final Message of a streamed call; text deltas go to `on_text` (tool input JSON does not).

    Only a stream that reached `message_stop` counts: one that ends early or runs past `timeout_seconds`
    raises ModelTransientError; the SDK's errors otherwise (the caller maps those as without streaming).
    """
    deadline = time.monotonic() + timeout_seconds
    try:
        with client.messages.stream(**kwargs) as stream:
            finished = False
            for event in stream:
                if event.type == "text":
                    on_text(event.text)
                elif event.type == "message_stop":
                    finished = True
                if time.monotonic() > deadline:
                    raise ModelTransientError(f"model stream still running after {timeout_seconds:g}s")
            if not finished:
                raise ModelTransientError("model stream ended before message_stop")
            return stream.get_final_message()
    except httpx2.TransportError as error:  # read while streaming: the SDK passes these through unwrapped
        raise ModelTransientError(f"model stream broke off: {type(error).__name__}") from error


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
    return None


def _error_type(body: object) -> str:
    """The `error.type` of an error body (`{"type": "error", "error": {"type": ...}}`), or ""."""
    error = body.get("error") if isinstance(body, dict) else None
    return str(error.get("type", "")) if isinstance(error, dict) else ""


def _short(text: str, limit: int = 300) -> str:
    return text if len(text) <= limit else text[:limit] + "…"
