"""Make the voice-note fixtures in tests/fixtures/voice: three spoken sentences, a silent note and a text file
with an .ogg name, as mono Ogg Opus the size of a short Telegram voice note.

The sentences are spoken by eSpeak NG (the `espeakng-loader` package) with a male US voice a little slower
than its default, which the offline recogniser (pocketsphinx) follows best. Run from the repository root:

    PYTHONPATH=layers/core python scripts/make_voice_fixtures.py
"""

from __future__ import annotations

import io
import sys
from pathlib import Path

import numpy as np
import soundfile as sf

from stepwise.voice.audio import encode_ogg_opus
from stepwise.voice.local_tts import speak_to_wav

FIXTURES = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "voice"
VOICE = "en-us+m6"
WORDS_PER_MINUTE = 140
SILENCE_RATE = 16000
SILENCE_SECONDS = 3

# File name -> what is said; the commas only give eSpeak a breath between "add" and the item.
SENTENCES = {
    "remind_me.ogg": "remind me to call mom at five pm",
    "add_milk.ogg": "add, buy milk, to my list",
    "hello.ogg": "hello, how are you today",
}
NOT_AUDIO = "This is a text file with an .ogg name: a voice note that is not audio.\n"


def main() -> int:
    FIXTURES.mkdir(parents=True, exist_ok=True)
    for name, text in SENTENCES.items():
        samples, rate = speak_to_wav(text, VOICE, WORDS_PER_MINUTE)
        write(name, encode_ogg_opus(samples, rate))
    write("silence.ogg", encode_ogg_opus(np.zeros(SILENCE_RATE * SILENCE_SECONDS, np.int16), SILENCE_RATE))
    write("not_audio.ogg", NOT_AUDIO.encode())
    return 0


def write(name: str, data: bytes) -> None:
    """Write one fixture and say what it is (Ogg Opus files are checked to be that)."""
    path = FIXTURES / name
    path.write_bytes(data)
    try:
        info = sf.info(io.BytesIO(data))
    except sf.LibsndfileError:
        print(f"{name}: {len(data)} bytes, not audio")
        return
    if (info.format, info.subtype, info.channels) != ("OGG", "OPUS", 1):
        raise SystemExit(
            f"{name} is {info.format}/{info.subtype} with {info.channels} channels, not mono Opus"
        )
    print(f"{name}: {len(data)} bytes, {info.duration:.2f} s, {info.samplerate} Hz mono Ogg Opus")


if __name__ == "__main__":
    sys.exit(main())
