"""The speech services' own settings (docs/voice.md), read only when a note is transcribed or an answer is
spoken. Which services are used, and the limits every turn checks, are in `stepwise.config.Settings`."""

from typing import Annotated

from annotated_types import Interval
from pydantic import ConfigDict, SecretStr, field_validator

from stepwise.aws.outbound_url import backslash_or_user_info, https_or_local
from stepwise.aws.secrets import resolve_secret
from stepwise.config import EnvSettings, blank_is_none


class VoiceServiceSettings(EnvSettings):
    """Amazon Transcribe's bucket and languages, an OpenAI-compatible API's URL, key and model, Polly's
    voice."""

    # A refused value is not repeated in the error: a URL's user-info may be a password.
    model_config = ConfigDict(hide_input_in_errors=True)

    # empty: Transcribe identifies the language; else en-US, pt-PT... (openai: en, pt)
    voice_language: str = ""
    voice_language_options: str = ""  # Transcribe's candidate languages for identification (comma-separated)
    voice_bucket_name: str | None = None  # where Amazon Transcribe reads a note (deleted after; 1-day expiry)
    voice_transcribe_timeout_seconds: Annotated[float, Interval(gt=0, le=800)] = 120.0
    voice_transcription_url: str = ""  # an OpenAI-compatible API's base URL (https://api.openai.com/v1)
    voice_transcription_key: SecretStr | None = None  # local use; on AWS the SSM parameter below
    voice_transcription_key_parameter: str | None = None  # the SSM SecureString holding its key
    voice_transcription_model: str = "whisper-1"
    voice_transcription_timeout_seconds: Annotated[float, Interval(gt=0, le=300)] = 30.0
    polly_voice_id: str = "Joanna"

    @field_validator(
        "voice_bucket_name", "voice_transcription_key", "voice_transcription_key_parameter", mode="before"
    )
    @classmethod
    def _blank_is_none(cls, value: object) -> object:
        return blank_is_none(value)

    @field_validator("voice_transcription_url")
    @classmethod
    def _http_url(cls, value: str) -> str:
        url = value.strip()
        if url and backslash_or_user_info(url):
            # Not echoed (the part before the `@` may be a password): the key has its own settings.
            raise ValueError(
                "VOICE_TRANSCRIPTION_URL must not hold a backslash or a user-info part (user@ or "
                "user:password@); put the key in VOICE_TRANSCRIPTION_KEY or its _PARAMETER"
            )
        if url and not https_or_local(url):
            # The key and the audio go there: plain http would carry them in clear text.
            raise ValueError(
                "VOICE_TRANSCRIPTION_URL must be an https:// URL (http:// only to localhost, 127.0.0.1 or "
                f"::1), got {url!r}"
            )
        return url

    def problem_for(self, transcriber: str) -> str | None:
        """What this section lacks for VOICE_TRANSCRIBER=`transcriber`, the one rule across it and
        `Settings`: the transcriber's builder raises it, `make chat`'s check reports it."""
        if transcriber == "openai" and not self.voice_transcription_url:
            return (
                "VOICE_TRANSCRIBER=openai needs VOICE_TRANSCRIPTION_URL, the API's base URL such as "
                "https://api.openai.com/v1"
            )
        return None

    def transcription_key(self, cache_seconds: int) -> str:
        """The OpenAI-compatible API's key (from SSM when only its parameter is set, cached for
        `cache_seconds`); "" when neither is set: a self-hosted server that takes no key."""
        if self.voice_transcription_key is None and not self.voice_transcription_key_parameter:
            return ""

        return resolve_secret(
            self.voice_transcription_key,
            self.voice_transcription_key_parameter,
            "VOICE_TRANSCRIPTION_KEY",
            cache_seconds,
        )
