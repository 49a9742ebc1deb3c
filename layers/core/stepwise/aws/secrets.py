"""Secrets: from the environment when set, otherwise from SSM SecureString parameters (cached)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from aws_lambda_powertools.utilities import parameters

if TYPE_CHECKING:
    from pydantic import SecretStr

    from stepwise.config import Settings


class MissingSecretError(RuntimeError):
    """A secret is neither in the environment nor named by an SSM parameter."""


def resolve_secret(value: SecretStr | None, parameter: str | None, name: str, cache_seconds: int) -> str:
    """Return the secret's value, reading the SSM parameter only when the value itself is not set."""
    if value is not None:
        return value.get_secret_value()
    if parameter:
        secret = parameters.get_parameter(parameter, decrypt=True, max_age=cache_seconds)
        if not isinstance(secret, str) or not secret.strip():
            raise MissingSecretError(f"SSM parameter {parameter} for {name} is empty")
        return secret.strip()
    raise MissingSecretError(f"{name} is not configured: set {name} or {name}_PARAMETER")


def telegram_bot_token(settings: Settings) -> str:
    """The bot token."""
    return resolve_secret(
        settings.telegram_bot_token,
        settings.telegram_bot_token_parameter,
        "TELEGRAM_BOT_TOKEN",
        settings.secrets_cache_seconds,
    )


def telegram_webhook_secret(settings: Settings) -> str:
    """The secret Telegram sends in X-Telegram-Bot-Api-Secret-Token."""
    return resolve_secret(
        settings.telegram_webhook_secret,
        settings.telegram_webhook_secret_parameter,
        "TELEGRAM_WEBHOOK_SECRET",
        settings.secrets_cache_seconds,
    )


def anthropic_api_key(settings: Settings) -> str | None:
    """The Anthropic key, or None for a keyless compatible endpoint (such as a local Ollama)."""
    if settings.anthropic_api_key is None and not settings.anthropic_api_key_parameter:
        return None
    return resolve_secret(
        settings.anthropic_api_key,
        settings.anthropic_api_key_parameter,
        "ANTHROPIC_API_KEY",
        settings.secrets_cache_seconds,
    )
