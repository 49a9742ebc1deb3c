"""The offline speaker for `make chat`, the tests and the voice fixtures: eSpeak NG, the library the
`espeakng-loader` package ships, called through ctypes, and its samples encoded as Ogg Opus.

eSpeak NG keeps global state (one voice, one synthesis callback), so it is initialised once per process and
one text is spoken at a time.
"""

from __future__ import annotations

import ctypes
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from stepwise.voice.audio import encode_ogg_opus, is_silent
from stepwise.voice.models import SpeechError, SpokenAudio

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

MISSING_ENGINE = "offline speech needs the espeakng-loader package"

# From espeak-ng's speak_lib.h.
_AUDIO_OUTPUT_SYNCHRONOUS = 2
_INITIALIZE_DONT_EXIT = 0x8000  # report bad data as an error instead of calling exit()
_CHARS_UTF8 = 1
_POS_CHARACTER = 1
_RATE = 1
_EE_OK = 0

# int callback(short *wav, int numsamples, espeak_EVENT *events): 0 goes on, 1 stops.
_SynthCallback = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.c_short), ctypes.c_int, ctypes.c_void_p)


@dataclass
class _Engine:
    """The loaded library, its output rate, and the callback (kept referenced so ctypes does not free it)."""

    library: Any
    rate: int
    callback: Any
    chunks: list[bytes]


_engine: _Engine | None = None
# Held while the engine is made and for each whole synthesis (voice, rate, text, collected samples).
_lock = threading.Lock()


def speak_to_wav(text: str, voice: str = "en", words_per_minute: int = 175) -> tuple[NDArray[np.int16], int]:
    """`text` spoken by eSpeak NG: mono int16 samples and their rate (22050 Hz). SpeechError when the engine
    is missing, the voice is unknown, or nothing was spoken (text without words)."""
    # optional: the offline voice packages are not in the layer (make chat and the tests only)
    import numpy as np

    with _lock:
        engine = _load_engine()
        engine.chunks.clear()
        library = engine.library
        if library.espeak_SetVoiceByName(voice.encode()) != _EE_OK:
            raise SpeechError(f"eSpeak NG has no voice {voice!r}")
        library.espeak_SetParameter(_RATE, words_per_minute, 0)
        encoded = text.encode("utf-8") + b"\0"
        status = library.espeak_Synth(encoded, len(encoded), 0, _POS_CHARACTER, 0, _CHARS_UTF8, None, None)
        library.espeak_Synchronize()
        if status != _EE_OK:
            raise SpeechError(f"eSpeak NG could not speak the text (error {status})")
        samples = np.frombuffer(b"".join(engine.chunks), dtype=np.int16).copy()
        engine.chunks.clear()
    if is_silent(samples, engine.rate):
        raise SpeechError("eSpeak NG spoke nothing (no words in the text)")
    return samples, engine.rate


class EspeakSpeaker:
    """Text in, Ogg Opus out, on this machine (a robotic voice, enough to hear the bot talk offline)."""

    def __init__(self, voice: str = "en", words_per_minute: int = 175) -> None:
        self._voice = voice
        self._words_per_minute = words_per_minute

    def synthesize(self, text: str) -> SpokenAudio:
        """`text` spoken as Ogg Opus; SpeechError when eSpeak NG is missing or cannot speak it."""
        samples, rate = speak_to_wav(text, self._voice, self._words_per_minute)
        return SpokenAudio(
            ogg_opus=encode_ogg_opus(samples, rate), seconds=samples.size / rate, characters=len(text)
        )


def _load_engine() -> _Engine:
    """The process's eSpeak NG, loaded and initialised on first use (call with `_lock` held)."""
    global _engine
    if _engine is not None:
        return _engine
    try:
        # optional: the offline voice packages are not in the layer (make chat and the tests only)
        import espeakng_loader

        library = ctypes.CDLL(espeakng_loader.get_library_path())
        data_path = espeakng_loader.get_data_path()
    except (ImportError, OSError, RuntimeError):
        raise SpeechError(MISSING_ENGINE) from None
    _declare(library)
    chunks: list[bytes] = []

    def collect(wav: Any, count: int, _events: Any) -> int:
        if wav and count > 0:
            chunks.append(ctypes.string_at(wav, count * ctypes.sizeof(ctypes.c_short)))
        return 0

    callback = _SynthCallback(collect)
    rate = library.espeak_Initialize(_AUDIO_OUTPUT_SYNCHRONOUS, 0, data_path.encode(), _INITIALIZE_DONT_EXIT)
    if rate <= 0:
        raise SpeechError(MISSING_ENGINE)
    library.espeak_SetSynthCallback(callback)
    _engine = _Engine(library=library, rate=rate, callback=callback, chunks=chunks)
    return _engine


def _declare(library: Any) -> None:
    """The C signatures of the functions used, so ctypes passes the arguments right."""
    library.espeak_Initialize.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_char_p, ctypes.c_int]
    library.espeak_Initialize.restype = ctypes.c_int
    library.espeak_SetSynthCallback.argtypes = [_SynthCallback]
    library.espeak_SetSynthCallback.restype = None
    library.espeak_SetVoiceByName.argtypes = [ctypes.c_char_p]
    library.espeak_SetVoiceByName.restype = ctypes.c_int
    library.espeak_SetParameter.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int]
    library.espeak_SetParameter.restype = ctypes.c_int
    library.espeak_Synth.argtypes = [
        ctypes.c_void_p,
        ctypes.c_size_t,
        ctypes.c_uint,
        ctypes.c_int,
        ctypes.c_uint,
        ctypes.c_uint,
        ctypes.POINTER(ctypes.c_uint),
        ctypes.c_void_p,
    ]
    library.espeak_Synth.restype = ctypes.c_int
    library.espeak_Synchronize.argtypes = []
    library.espeak_Synchronize.restype = ctypes.c_int
