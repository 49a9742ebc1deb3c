"""Amazon Polly as a `Speaker`: text in, Ogg Opus out (what Telegram's sendVoice takes as a voice note)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from botocore.exceptions import BotoCoreError, ClientError

from stepwise.voice.models import SpeechError, SpokenAudio

if TYPE_CHECKING:
    from collections.abc import Callable

ENGINES = frozenset({"standard", "neural", "long-form", "generative"})
OUTPUT_FORMAT = "ogg_opus"
SAMPLE_RATE = "48000"  # ogg_opus takes 8000, 16000, 24000 or 48000 (Hz)


class PollySpeaker:
    """`Speaker` over Polly's SynthesizeSpeech with `voice_id` and `engine` (the voice must offer that
    engine, or Polly refuses: EngineNotSupportedException)."""

    def __init__(self, polly: Callable[[], Any], voice_id: str = "Joanna", engine: str = "neural") -> None:
        if engine not in ENGINES:
            raise ValueError(f"engine must be one of {', '.join(sorted(ENGINES))}")
        if not voice_id:
            raise ValueError("voice_id must not be empty")
        self._polly = polly
        self._voice_id = voice_id
        self._engine = engine

    def synthesize(self, text: str) -> SpokenAudio:
        """`text` spoken as Ogg Opus; SpeechError when Polly refuses or cannot be reached."""
        if not text.strip():
            raise SpeechError("nothing to speak")
        try:
            response = self._polly().synthesize_speech(
                OutputFormat=OUTPUT_FORMAT,
                SampleRate=SAMPLE_RATE,
                Text=text,
                TextType="text",
                VoiceId=self._voice_id,
                Engine=self._engine,
            )
            stream = response["AudioStream"]
            try:
                audio: bytes = stream.read()
            finally:
                stream.close()
        except ClientError as error:
            code = error.response.get("Error", {}).get("Code", "Unknown")
            status = error.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
            raise SpeechError(f"SynthesizeSpeech: {code} (HTTP {status})") from error
        except BotoCoreError as error:  # no connection, a read time-out, the stream cut off
            raise SpeechError(f"SynthesizeSpeech: {type(error).__name__}") from error
        if not audio:
            raise SpeechError("SynthesizeSpeech: no audio")
        return SpokenAudio(ogg_opus=audio, seconds=0.0, characters=len(text))
