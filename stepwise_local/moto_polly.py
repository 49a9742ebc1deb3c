"""moto gap: Amazon Polly's SynthesizeSpeech with `OutputFormat=ogg_opus` (what Telegram's sendVoice takes).

moto 5.2.5 answers SynthesizeSpeech with eight zero bytes and refuses `ogg_opus` (it knows json, mp3,
ogg_vorbis and pcm, at 8, 16 or 22.05 kHz). The emulation's patch answers an `ogg_opus` request as Polly does:
real Ogg Opus audio of the text (spoken offline by eSpeak NG), after Polly's own checks of the parameters the
project sends (a known voice, an engine, a sample rate Opus takes, at most 3,000 characters); any other
request goes to moto as before.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any
from unittest import mock

from moto.polly.resources import VOICE_IDS
from moto.polly.responses import PollyResponse

OPUS_RATES = frozenset({"8000", "16000", "24000", "48000"})
ENGINES = frozenset({"standard", "neural", "long-form", "generative"})
MAX_CHARACTERS = 3000


@contextmanager
def ogg_opus_speech(speak: Callable[[str], bytes]) -> Iterator[None]:
    """While inside: moto's Polly answers `ogg_opus` requests with `speak(text)`."""
    original = PollyResponse.speech

    def speech(self: PollyResponse) -> Any:
        body = json.loads(self.body or b"{}")
        if body.get("OutputFormat") != "ogg_opus":
            return original(self)
        problem = _problem(body)
        if problem is not None:
            return self._error(*problem)
        return speak(body["Text"]), {
            "Content-Type": "audio/ogg",
            "x-amzn-RequestCharacters": str(len(body["Text"])),
        }

    with mock.patch.object(PollyResponse, "speech", speech):
        yield


def _problem(body: dict[str, Any]) -> tuple[str, str] | None:
    """The error Polly answers a request with, or None."""
    text = body.get("Text")
    if not isinstance(text, str) or not text:
        return "MissingParameter", "Missing parameter Text"
    if len(text) > MAX_CHARACTERS:
        return "TextLengthExceededException", "Text too long"
    if body.get("VoiceId") not in VOICE_IDS:
        return "InvalidParameterValue", "VoiceId is not a Polly voice"
    if body.get("Engine", "standard") not in ENGINES:
        return "InvalidParameterValue", "Engine is not one of standard, neural, long-form, generative"
    if str(body.get("SampleRate", "48000")) not in OPUS_RATES:
        return "InvalidSampleRateException", "The specified sample rate is not valid."
    return None
