"""The base of the Telegram models (`telegram.models`, `telegram.keyboard`)."""

from pydantic import BaseModel, ConfigDict


class _TelegramModel(BaseModel):
    """Base: ignore unknown fields, accept both field names and Telegram's aliases, coerce nothing."""

    model_config = ConfigDict(
        defer_build=True, extra="ignore", populate_by_name=True, frozen=True, strict=True
    )
