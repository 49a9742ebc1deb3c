"""Model failures, named so the state machine can tell them apart (the class name is the ASL error name)."""


class ModelTransientError(RuntimeError):
    """Worth retrying: rate limits, overload, server errors, timeouts, connection failures."""


class ModelPermanentError(RuntimeError):
    """Retrying will not help: bad request, authentication, permissions, unknown model."""
