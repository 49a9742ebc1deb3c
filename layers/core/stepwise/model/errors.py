"""Model failures, named so the state machine can tell them apart (the class name is the ASL error name)."""


class ModelTransientError(RuntimeError):
    """Worth retrying: rate limits, overload, server errors, timeouts, connection failures."""


class ModelPermanentError(RuntimeError):
    """Retrying will not help: bad request, authentication, permissions, unknown model."""


class ModelRateLimitedError(ModelTransientError):
    """The API answered 429 or 529 and said when to try again (`retry-after`): the turn waits that long."""

    def __init__(self, message: str, retry_after_seconds: float) -> None:
        super().__init__(message)
        self.retry_after_seconds = retry_after_seconds
