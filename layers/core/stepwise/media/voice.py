"""What the turn's states are given for voice notes: the transcriber and the speaker (built on first use, so
a turn without audio imports neither, nor anything of `stepwise.voice`), and the limits and prices that go
with them."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable

    from stepwise.voice.models import Speaker, Transcriber


@dataclass(frozen=True)
class VoiceSetup:
    """The deployment's voice settings: `transcriber_name` is VOICE_TRANSCRIBER ("off": voice notes get a
    notice and never reach this), `speaker` is None when spoken replies are off (VOICE_SPEAKER=off)."""

    transcriber_name: str
    transcriber: Callable[[], Transcriber]
    speaker: Callable[[], Speaker] | None = None
    speech_engine: str = "neural"  # Polly's engine ("local" offline): what speech costs
    max_reply_chars: int = 1500
    openai_usd_per_minute: Decimal = Decimal("0.006")
    max_seconds: int = 300  # VOICE_MAX_SECONDS: checked again on the downloaded audio's own length
