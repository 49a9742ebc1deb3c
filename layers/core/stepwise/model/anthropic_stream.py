"""One Messages API call over its SSE stream (the SDK's `messages.stream`), passing text on as it arrives.

Only a stream that reached `message_stop` counts: one that broke off (the connection dropped, an `error`
event such as `overloaded_error`, or longer than the call's timeout in all) raises, so a half answer never
becomes the turn's reply.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from stepwise.model.errors import ModelTransientError

if TYPE_CHECKING:
    from stepwise.model.types import TextSink


def stream_message(client: Any, kwargs: dict[str, Any], on_text: TextSink, timeout_seconds: float) -> Any:
    """The final Message of a streamed call; text deltas go to `on_text` (tool input JSON does not).

    Raises ModelTransientError when the stream ends early or runs past `timeout_seconds`, the SDK's errors
    otherwise (the caller maps those as for a call without streaming).
    """
    import httpx2

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
