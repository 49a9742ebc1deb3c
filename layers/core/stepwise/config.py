"""Settings, read from the environment and validated once. Nothing else in the core reads os.environ."""

import os
from functools import cache
from importlib import import_module
from typing import Annotated, Any, Literal
from zoneinfo import ZoneInfo

from annotated_types import Interval, MinLen
from pydantic import BaseModel, ConfigDict, SecretStr, field_validator, model_validator

DEFAULT_MODEL = "claude-haiku-4-5"
# Tokens one user may use per UTC day unless DAILY_TOKEN_BUDGET says otherwise (0: no cap). On the default
# model that is $1 to $5 a day at most (all input to all output), about 312 turns of 3,200 tokens: see
# docs/spend-cap-and-usage.md.
DEFAULT_DAILY_TOKEN_BUDGET = 1_000_000


# The sections of the settings that only some code reads, each validated where it is first used (see
# `EnvSettings`): `module:Class`, so that `make chat`'s check validates them all without this module importing
# them.
SECTIONS = (
    "stepwise.warmups.settings:WarmupSettings",
    "stepwise.mcp.settings:EndpointSettings",
    "stepwise.miniapp.settings:AppSettings",
    "stepwise.remote_tools.settings:RemoteToolSettings",
    "stepwise.voice.settings:VoiceServiceSettings",
    "stepwise.memory.settings:MemoryIndexSettings",
    "stepwise.accounts.settings:AccountSettings",
)


class EnvSettings(BaseModel):
    """Settings read from the environment: each field from the variable of its name in capitals (values given
    explicitly win).

    Plain pydantic rather than pydantic-settings, whose features Stepwise does not use. `Settings` holds what
    the turn's states read; the settings that only some code reads are sections of their own (`SECTIONS`),
    each in the package that reads it and built by that code.
    """

    model_config = ConfigDict(defer_build=True, extra="ignore", frozen=True)

    @model_validator(mode="before")
    @classmethod
    def _from_environment(cls, data: Any) -> Any:
        given = dict(data) if isinstance(data, dict) else {}
        found = {name: os.environ[name.upper()] for name in cls.model_fields if name.upper() in os.environ}
        return {**found, **given}


def blank_is_none(value: object) -> object:
    """A `mode="before"` validator's body: an empty or blank text is no value."""
    return None if isinstance(value, str) and not value.strip() else value


class Settings(EnvSettings):
    """The settings every state of the turn reads; docs/configuration.md documents each one (and which are in
    the sections)."""

    # Secrets: the value itself, or the name of an SSM SecureString parameter holding it.
    telegram_bot_token: SecretStr | None = None
    telegram_bot_token_parameter: str | None = None
    telegram_webhook_secret: SecretStr | None = None
    telegram_webhook_secret_parameter: str | None = None
    anthropic_api_key: SecretStr | None = None
    anthropic_api_key_parameter: str | None = None
    secrets_cache_seconds: Annotated[int, Interval(ge=0)] = 300

    allowed_user_ids: str = ""
    # Groups (docs/groups.md): the groups served (empty: any group an allowlisted member writes in), and
    # whether a group's messages are answered only when they address the bot or all of them.
    allowed_chat_ids: str = ""
    group_replies: Literal["mentions", "all"] = "mentions"

    anthropic_model: str = DEFAULT_MODEL
    anthropic_base_url: str | None = None
    anthropic_max_tokens: Annotated[int, Interval(ge=16, le=64_000)] = 2048
    anthropic_timeout_seconds: Annotated[float, Interval(gt=0)] = 60.0
    anthropic_max_retries: Annotated[int, Interval(ge=0, le=5)] = 0

    telegram_api_base_url: str = "https://api.telegram.org"
    # Waits end before the Lambda timeout (at most 900 s) would end them; see docs/reliability.md, "When
    # Telegram is slow".
    telegram_connect_timeout_seconds: Annotated[float, Interval(gt=0, le=900)] = 5.0
    telegram_timeout_seconds: Annotated[float, Interval(gt=0)] = 10.0
    telegram_send_timeout_seconds: Annotated[float, Interval(gt=0, le=900)] = 20.0
    telegram_max_retry_after_seconds: Annotated[float, Interval(ge=0)] = 30.0
    # Streaming replies: the growing answer as a Telegram draft in private chats (see docs/streaming.md).
    draft_interval_seconds: Annotated[float, Interval(ge=0, le=60)] = 1.0
    draft_timeout_seconds: Annotated[float, Interval(gt=0, le=30)] = 2.0
    # Replies without link previews unless this is on: a preview is a fetch by Telegram's servers of a link
    # the model wrote, with no tap (see docs/security.md).
    link_previews: bool = False

    max_tool_steps: Annotated[int, Interval(ge=1, le=25)] = 5
    history_limit: Annotated[int, Interval(ge=1, le=200)] = 20
    # None ("auto", the default): the margin and the breakpoints follow the model (stepwise.prompt.caching)
    history_margin: Annotated[int | None, Interval(ge=0, le=200)] = None

    approval_timeout_seconds: Annotated[int, Interval(ge=1, le=518_400)] = 3600
    fallback_model: Literal["rules", "off"] = "rules"

    # Long-term memory (docs/memory.md); the index's own settings: stepwise.memory.settings.
    memory_backend: Literal["aws", "local"] = "aws"
    vector_bucket_name: str | None = None
    memory_top_k: Annotated[int, Interval(ge=0, le=20)] = 3
    summary_threshold: Annotated[int, Interval(ge=1, le=1000)] = 20

    messages_table: str = "stepwise-messages"
    turns_table: str = "stepwise-turns"
    tasks_table: str = "stepwise-tasks"
    audit_table: str = "stepwise-audit"
    approvals_table: str = "stepwise-approvals"
    chats_table: str = "stepwise-chats"
    inbox_table: str = "stepwise-inbox"
    chat_lease_seconds: Annotated[int, Interval(ge=30, le=86_400)] = 900
    tool_calls_table: Annotated[str, MinLen(1)] = "stepwise-tool-calls"
    turn_ttl_days: Annotated[int, Interval(ge=1)] = 7
    state_machine_arn: str | None = None
    usage_table: Annotated[str, MinLen(1)] = "stepwise-usage"
    daily_token_budget: Annotated[int, Interval(ge=0)] = DEFAULT_DAILY_TOKEN_BUDGET

    reminders_table: str = "stepwise-reminders"
    schedule_group_name: str = "stepwise-reminders"
    scheduler_role_arn: str | None = None
    reminder_target_arn: str | None = None
    default_timezone: str = "UTC"
    checkin_idle_days: Annotated[int, Interval(ge=1, le=365)] = 2
    min_checkin_interval_minutes: Annotated[int, Interval(ge=1, le=10_080)] = 60
    # No repeating reminder or check-in runs more often (docs/security.md, "Check-ins and repeats").
    min_repeat_interval_minutes: Annotated[int, Interval(ge=1, le=10_080)] = 15
    max_reminders: Annotated[int, Interval(ge=1, le=10_000)] = 100

    # Background jobs (docs/jobs.md): empty table name: spawn_job is not offered, /jobs says so.
    jobs_table: str = ""
    max_jobs: Annotated[int, Interval(ge=1, le=20)] = 3
    job_max_tool_steps: Annotated[int, Interval(ge=1, le=100)] = 20
    job_timeout_minutes: Annotated[int, Interval(ge=1, le=1440)] = 15

    # Photos and documents (docs/photos-and-documents.md): Anthropic takes images up to 5 MB of base64.
    max_image_bytes: Annotated[int, Interval(ge=1, le=3_932_160)] = 3_750_000
    max_document_bytes: Annotated[int, Interval(ge=1, le=20_000_000)] = 10_000_000  # Bot API downloads: 20 MB
    persona_dir: str | None = None  # the persona files' folder; None: the one shipped in the layer
    skills_dir: str | None = None  # the skills' folder (docs/skills.md); None: the one shipped in the layer

    # Secretary mode (docs/secretary.md): empty table name: business updates are ignored. A suggestion waits
    # for the owner's tap this long (Telegram lets a business bot answer for 24 hours after a message).
    secretary_table: str = ""
    secretary_suggestion_hours: Annotated[int, Interval(ge=1, le=24)] = 24

    # Stepwise as an MCP server (docs/mcp.md): the tokens' table, the endpoint /connect shows, the rate limit.
    connections_table: str = ""  # empty: no /mcp endpoint, /connect says so
    mcp_url: str = ""  # the endpoint's limits: stepwise.mcp.settings
    app_url: str = ""  # the Mini App's page (/app answers with a button that opens it); empty: not deployed
    # Outside MCP servers whose tools the model may use (docs/mcp-client.md); no parameter: none. How they
    # are reached: stepwise.remote_tools.settings.
    mcp_servers_parameter: str | None = None
    # Anthropic's server tools (docs/web.md): off by default; uses per turn; domain lists (comma-separated).
    web_search: bool = False
    web_fetch: bool = False
    web_max_uses: Annotated[int, Interval(ge=1, le=20)] = 5
    web_allowed_domains: str = ""
    web_blocked_domains: str = ""

    # Voice notes (docs/voice.md): who transcribes them, the longest note, and spoken replies; the services'
    # own settings (language, bucket, URL, key, voice): stepwise.voice.settings.
    voice_transcriber: Literal["transcribe", "openai", "local", "off"] = "transcribe"
    voice_max_seconds: Annotated[int, Interval(ge=1, le=3600)] = 300
    voice_transcription_usd_per_minute: Annotated[float, Interval(ge=0, le=10)] = 0.006  # /usage (openai)
    voice_speaker: Literal["polly", "local", "off"] = "polly"
    polly_engine: Literal["standard", "neural", "long-form", "generative"] = "neural"
    voice_reply_max_chars: Annotated[int, Interval(ge=50, le=3000)] = 1500  # Polly takes at most 3,000

    @field_validator("default_timezone")
    @classmethod
    def _known_zone(cls, value: str) -> str:
        try:
            ZoneInfo(value)
        except Exception:  # ZoneInfoNotFoundError, or a malformed key
            raise ValueError(
                f"DEFAULT_TIMEZONE must be an IANA time zone such as Europe/Lisbon, got {value!r}"
            ) from None
        return value

    @field_validator("history_margin", mode="before")
    @classmethod
    def _auto_margin(cls, value: object) -> object:
        if isinstance(value, str) and value.strip().lower() in ("", "auto"):
            return None
        if isinstance(value, str):
            if not value.strip().isdigit():
                raise ValueError(f"HISTORY_MARGIN must be auto or a whole number of messages, got {value!r}")
            return int(value)
        return value

    @field_validator("allowed_user_ids")
    @classmethod
    def _check_user_ids(cls, value: str) -> str:
        for part in _split_ids(value):
            if not part.lstrip("-").isdigit():
                raise ValueError(f"ALLOWED_USER_IDS must be comma-separated Telegram user ids, got {part!r}")
        return value

    @field_validator("allowed_chat_ids")
    @classmethod
    def _check_chat_ids(cls, value: str) -> str:
        for part in _split_ids(value):
            if not (part.startswith("-") and part[1:].isdigit()):
                raise ValueError(
                    f"ALLOWED_CHAT_IDS must be comma-separated group chat ids (negative), got {part!r}"
                )
        return value

    @field_validator(
        "anthropic_base_url",
        "anthropic_api_key_parameter",
        "telegram_bot_token_parameter",
        "telegram_webhook_secret_parameter",
        "state_machine_arn",
        "vector_bucket_name",
        "scheduler_role_arn",
        "reminder_target_arn",
        "persona_dir",
        "skills_dir",
        "mcp_servers_parameter",
        "anthropic_api_key",
        "telegram_bot_token",
        "telegram_webhook_secret",
        mode="before",
    )
    @classmethod
    def _blank_is_none(cls, value: object) -> object:
        return blank_is_none(value)

    @field_validator("web_allowed_domains", "web_blocked_domains")
    @classmethod
    def _domains(cls, value: str) -> str:
        for part in _split_ids(value):
            if "/" in part or " " in part or "." not in part:
                raise ValueError(f"web domains must be names such as example.com, got {part!r}")
        return value

    @model_validator(mode="after")
    def _one_domain_list(self) -> "Settings":
        if self.web_allowed_domains.strip() and self.web_blocked_domains.strip():
            raise ValueError(
                "set WEB_ALLOWED_DOMAINS or WEB_BLOCKED_DOMAINS, not both (the API refuses both)"
            )
        return self

    @model_validator(mode="after")
    def _check_ins_repeat_no_faster(self) -> "Settings":
        if self.min_checkin_interval_minutes < self.min_repeat_interval_minutes:
            raise ValueError(
                f"MIN_CHECKIN_INTERVAL_MINUTES ({self.min_checkin_interval_minutes}) is below "
                f"MIN_REPEAT_INTERVAL_MINUTES ({self.min_repeat_interval_minutes}), the shortest interval of "
                "any repeat: lower MIN_REPEAT_INTERVAL_MINUTES too"
            )
        return self

    @property
    def allowed_users(self) -> frozenset[int]:
        """The allowlist; empty means nobody (fail closed)."""
        return frozenset(int(part) for part in _split_ids(self.allowed_user_ids))

    @property
    def allowed_chats(self) -> frozenset[int]:
        """The groups served; empty means every group an allowlisted member addresses the bot in."""
        return frozenset(int(part) for part in _split_ids(self.allowed_chat_ids))

    @property
    def uses_anthropic(self) -> bool:
        """True when a Messages API is configured: a key (direct or in SSM) or a compatible base URL."""
        return bool(self.anthropic_api_key or self.anthropic_api_key_parameter or self.anthropic_base_url)


def split_list(value: str) -> list[str]:
    """The non-empty, stripped items of a comma-separated setting."""
    return _split_ids(value)


def _split_ids(value: str) -> list[str]:
    return [part.strip() for part in value.split(",") if part.strip()]


def all_settings_models() -> list[type[EnvSettings]]:
    """`Settings` and each of its sections (their modules imported now): what `make chat` checks, and what the
    documentation must cover."""
    models: list[type[EnvSettings]] = [Settings]
    for path in SECTIONS:
        module, _, name = path.partition(":")
        models.append(getattr(import_module(module), name))
    return models


@cache
def get_settings() -> "Settings":
    """The settings of this process, validated on first use."""
    return Settings()
