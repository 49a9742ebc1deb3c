"""The warm-up event and the handler decorator that answers it: the part of warm-ups every function imports.

The webhook sends the event (`stepwise.warmups.warmer`); a state's handler answers it at once with
`answers_warmups`, after preparing what its first real call would build. Kept apart so that the states do not
import the code that decides on and sends warm-ups, which only the webhook runs.
"""

from __future__ import annotations

import functools
import logging
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable

logger = logging.getLogger(__name__)

WARMUP_KEY = "stepwise_warmup"
WARMUP_EVENT: dict[str, Any] = {WARMUP_KEY: True}
WARMUP_PAYLOAD = b'{"stepwise_warmup": true}'  # WARMUP_EVENT as JSON
WARMED: dict[str, Any] = {"warmed": True}


def is_warmup(event: object) -> bool:
    """True for the webhook's warm-up event (and nothing else: a state's input never has this key)."""
    return isinstance(event, dict) and event.get(WARMUP_KEY) is True


def answers_warmups[**P, R](
    prepare: Callable[[], object] | None = None,
) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """Make a Lambda handler answer a warm-up at once: the container's init (the imports) is the point, and
    `prepare` does what the first real call would otherwise do before its first request (the settings, the
    SDK clients, the event model's validator); no project logic runs and nothing is read or written. A
    `prepare` that fails is logged and the warm-up still answers."""

    def decorate(handler: Callable[P, R]) -> Callable[P, R]:
        @functools.wraps(handler)
        def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
            if args and is_warmup(args[0]):
                if prepare is not None:
                    try:
                        prepare()
                    except Exception as error:  # the real call will build it and say what is wrong
                        logger.warning("warm-up could not prepare", extra={"error": type(error).__name__})
                return WARMED  # type: ignore[return-value]
            return handler(*args, **kwargs)

        return wrapper

    return decorate
