"""Settings, read from the environment and validated once. Nothing else in the core reads os.environ."""

import os
from functools import cache
from typing import Annotated, Any, Literal

from annotated_types import Interval, MinLen
from pydantic import BaseModel, ConfigDict, SecretStr, field_validator, model_validator

DEFAULT_MODEL = "claude-haiku-4-5"


class Settings(BaseModel):
    """Every setting of Stepwise; docs/configuration.md documents each one.

    Each field is read from the environment variable of the same name in capitals (values given explicitly
    win). Plain pydantic rather than pydantic-settings: the latter costs every cold start about a quarter of
    `import boto3` (see `make bench`) for features Stepwise does not use.
    """

    model_config = ConfigDict(defer_build=True, extra="ignore", frozen=True)

    @model_validator(mode="before")
    @classmethod
    def _from_environment(cls, data: Any) -> Any:
        given = dict(data) if isinstance(data, dict) else {}
        found = {name: os.environ[name.upper()] for name in cls.model_fields if name.upper() in os.environ}
        return {**found, **given}

    # Secrets: the value itself, or the name of an SSM SecureString parameter holding it.
    telegram_bot_token: SecretStr | None = None
    telegram_bot_token_parameter: str | None = None
    telegram_webhook_secret: SecretStr | None = None
    telegram_webhook_secret_parameter: str | None = None
    anthropic_api_key: SecretStr | None = None
    anthropic_api_key_parameter: str | None = None
    secrets_cache_seconds: Annotated[int, Interval(ge=0)] = 300

    allowed_user_ids: str = ""

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

    max_tool_steps: Annotated[int, Interval(ge=1, le=25)] = 5
    history_limit: Annotated[int, Interval(ge=1, le=200)] = 20
    # None ("auto", the default): the margin and the breakpoints follow the model (stepwise.prompt.caching)
    history_margin: Annotated[int | None, Interval(ge=0, le=200)] = None

    approval_timeout_seconds: Annotated[int, Interval(ge=1, le=518_400)] = 3600
    fallback_model: Literal["rules", "off"] = "rules"

    memory_backend: Literal["aws", "local"] = "aws"
    vector_bucket_name: str | None = None
    vector_index_name: str = "memories"
    embedding_model_id: str = "amazon.titan-embed-text-v2:0"
    embedding_dimensions: int = 256
    memory_top_k: Annotated[int, Interval(ge=0, le=20)] = 3
    summary_threshold: Annotated[int, Interval(ge=1, le=1000)] = 20
    summary_batch_limit: Annotated[int, Interval(ge=1, le=2000)] = 200

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
    daily_token_budget: Annotated[int, Interval(ge=0)] = 0

    reminders_table: str = "stepwise-reminders"
    schedule_group_name: str = "stepwise-reminders"
    scheduler_role_arn: str | None = None
    reminder_target_arn: str | None = None
    default_timezone: str = "UTC"
    checkin_idle_days: Annotated[int, Interval(ge=1, le=365)] = 2
    min_checkin_interval_minutes: Annotated[int, Interval(ge=1, le=10_080)] = 60
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

    # Stepwise as an MCP server (docs/mcp.md): the tokens' table, the endpoint /connect shows, the rate limit.
    connections_table: str = ""  # empty: no /mcp endpoint, /connect says so
    mcp_url: str = ""
    mcp_requests_per_minute: Annotated[int, Interval(ge=1, le=10_000)] = 60
    mcp_max_body_bytes: Annotated[int, Interval(ge=1024, le=10_485_760)] = 1_048_576
    # Outside MCP servers whose tools the model may use (docs/mcp-client.md); no parameter: none.
    mcp_servers_parameter: str | None = None
    mcp_parameters_path: str = "/stepwise/mcp/"
    remote_tools_table: Annotated[str, MinLen(1)] = "stepwise-remote-tools"
    remote_tools_refresh: bool = False  # CallModel's: fetch stale lists again (RunTools only reads them)
    remote_tools_refresh_seconds: Annotated[int, Interval(ge=60, le=604_800)] = 3600
    remote_tool_timeout_seconds: Annotated[float, Interval(gt=0, le=60)] = 12.0
    remote_result_max_chars: Annotated[int, Interval(ge=500, le=8000)] = 8000
    remote_breaker_failures: Annotated[int, Interval(ge=1, le=100)] = 3
    remote_breaker_seconds: Annotated[int, Interval(ge=10, le=86_400)] = 300
    # Anthropic's server tools (docs/web.md): off by default; uses per turn; domain lists (comma-separated).
    web_search: bool = False
    web_fetch: bool = False
    web_max_uses: Annotated[int, Interval(ge=1, le=20)] = 5
    web_allowed_domains: str = ""
    web_blocked_domains: str = ""

    # Warm-ups (docs/performance.md): after this long without a turn in the chat, the webhook starts the
    # containers of CallModel, FinishTurn (and RunTools) in parallel; 0 turns warm-ups off.
    warmup_after_quiet_seconds: Annotated[int, Interval(ge=0, le=86_400)] = 300
    warmup_timeout_seconds: Annotated[float, Interval(gt=0, le=5)] = 0.25
    call_model_function: str = ""  # the functions warmed up (set by the template for the webhook)
    finish_turn_function: str = ""
    run_tools_function: str = ""

    # Voice notes (docs/voice.md): who transcribes them, the longest note, and spoken replies.
    voice_transcriber: Literal["transcribe", "openai", "local", "off"] = "transcribe"
    voice_language: str = (
        ""  # empty: Transcribe identifies the language; else en-US, pt-PT... (openai: en, pt)
    )
    voice_language_options: str = ""  # Transcribe's candidate languages for identification (comma-separated)
    voice_max_seconds: Annotated[int, Interval(ge=1, le=3600)] = 300
    voice_bucket_name: str | None = None  # where Amazon Transcribe reads a note (deleted after; 1-day expiry)
    voice_transcribe_timeout_seconds: Annotated[float, Interval(gt=0, le=800)] = 120.0
    voice_transcription_url: str = ""  # an OpenAI-compatible API's base URL (https://api.openai.com/v1)
    voice_transcription_key: SecretStr | None = None  # local use; on AWS the SSM parameter below
    voice_transcription_key_parameter: str | None = None  # the SSM SecureString holding its key
    voice_transcription_model: str = "whisper-1"
    voice_transcription_timeout_seconds: Annotated[float, Interval(gt=0, le=300)] = 30.0
    voice_transcription_usd_per_minute: Annotated[float, Interval(ge=0, le=10)] = (
        0.006  # /usage's estimate (openai)
    )
    voice_speaker: Literal["polly", "local", "off"] = "polly"
    polly_voice_id: str = "Joanna"
    polly_engine: Literal["standard", "neural", "long-form", "generative"] = "neural"
    voice_reply_max_chars: Annotated[int, Interval(ge=50, le=3000)] = (
        1500  # Polly takes at most 3,000 characters
    )

    @field_validator("default_timezone")
    @classmethod
    def _known_zone(cls, value: str) -> str:
        from zoneinfo import ZoneInfo

        try:
            ZoneInfo(value)
        except Exception:  # ZoneInfoNotFoundError, or a malformed key
            raise ValueError(
                f"DEFAULT_TIMEZONE must be an IANA time zone such as Europe/Lisbon, got {value!r}"
            ) from None
        return value

    @field_validator("mcp_parameters_path")
    @classmethod
    def _parameter_path(cls, value: str) -> str:
        if not (value.startswith("/") and value.endswith("/")):
            raise ValueError(f"MCP_PARAMETERS_PATH must start and end with /, got {value!r}")
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
        "voice_bucket_name",
        "voice_transcription_key_parameter",
        mode="before",
    )
    @classmethod
    def _blank_is_none(cls, value: object) -> object:
        return None if isinstance(value, str) and not value.strip() else value

    @field_validator(
        "anthropic_api_key",
        "telegram_bot_token",
        "telegram_webhook_secret",
        "voice_transcription_key",
        mode="before",
    )
    @classmethod
    def _blank_secret_is_none(cls, value: object) -> object:
        return None if isinstance(value, str) and not value.strip() else value

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
    def _voice_transcriber_settings(self) -> "Settings":
        if self.voice_transcriber == "openai" and not self.voice_transcription_url.strip():
            raise ValueError(
                "VOICE_TRANSCRIBER=openai needs VOICE_TRANSCRIPTION_URL, the API's base URL such as "
                "https://api.openai.com/v1"
            )
        url = self.voice_transcription_url.strip()
        if url and not url.startswith(("https://", "http://")):
            raise ValueError(f"VOICE_TRANSCRIPTION_URL must be an http(s) URL, got {url!r}")
        return self

    @field_validator("embedding_dimensions")
    @classmethod
    def _titan_dimensions(cls, value: int) -> int:
        if value not in (256, 512, 1024):
            raise ValueError("EMBEDDING_DIMENSIONS must be 256, 512 or 1024 (Titan Text Embeddings V2)")
        return value

    @property
    def allowed_users(self) -> frozenset[int]:
        """The allowlist; empty means nobody (fail closed)."""
        return frozenset(int(part) for part in _split_ids(self.allowed_user_ids))

    @property
    def uses_anthropic(self) -> bool:
        """True when a Messages API is configured: a key (direct or in SSM) or a compatible base URL."""
        return bool(self.anthropic_api_key or self.anthropic_api_key_parameter or self.anthropic_base_url)


def split_list(value: str) -> list[str]:
    """The non-empty, stripped items of a comma-separated setting."""
    return _split_ids(value)


def _split_ids(value: str) -> list[str]:
    return [part.strip() for part in value.split(",") if part.strip()]


@cache
def get_settings() -> "Settings":
    """The settings of this process, validated on first use."""
    return Settings()
