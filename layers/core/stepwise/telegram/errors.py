"""Exceptions raised by Telegram Bot API clients."""

from __future__ import annotations


class TelegramError(Exception):
    """A Bot API call failed; ``method``, ``status`` and ``description`` tell how (never the token)."""

    def __init__(self, method: str, status: int | None, description: str) -> None:
        self.method = method
        self.status = status
        self.description = description
        super().__init__(f"Telegram {method} failed (status {status}): {description}")


class TelegramTransientError(TelegramError):
    """A failure worth retrying later: 5xx, network errors, timeouts, lasting rate limits."""

    def __init__(
        self, method: str, status: int | None, description: str, *, retry_after: float | None = None
    ) -> None:
        super().__init__(method, status, description)
        self.retry_after = retry_after


class TelegramDeliveryUncertainError(TelegramTransientError):
    """A message was sent but no answer came back (read timeout, connection lost): Telegram may have shown it.

    Telegram has no idempotency key and a bot cannot read its chat, so nobody can tell. Sending again risks
    a duplicate; not sending risks losing the message. Stepwise prefers a rare duplicate to a lost reply (see
    docs/reliability.md, "When Telegram is slow"), so this stays a transient error, under its own name for
    the state machine's retry policy.
    """


class TelegramBadRequest(TelegramError):
    """Telegram answered 400: the request itself is wrong (bad entities, message too long, ...)."""


class TelegramForbidden(TelegramError):
    """Telegram answered 401/403: bad token, or the user blocked the bot."""
