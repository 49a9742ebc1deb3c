"""Audio bytes to samples and back, for the offline transcriber and speaker: decode whatever libsndfile reads
(Ogg Opus as Telegram records voice notes, Ogg Vorbis, WAV, FLAC, MP3) to mono int16 at one rate, tell a
silent note, and encode samples as mono Ogg Opus (what Telegram's sendVoice takes).

numpy and soundfile are imported where they are used: they are optional packages (`make chat` and the tests),
not in the layer.
"""

from __future__ import annotations

import io
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from stepwise.voice.models import TranscriptionRejected

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

# The rates libsndfile's Opus encoder takes; anything else is resampled to 48 kHz (Opus's own rate) first.
OPUS_RATES = frozenset({8000, 12000, 16000, 24000, 48000})
_OPUS_FALLBACK_RATE = 48000
# libsndfile's compression level for Opus (0.0 is its highest bitrate, 1.0 its lowest): 0.93 comes to about
# 20 kb/s for a mono voice, clear speech at a few KB a second (its default is three times that).
SPEECH_COMPRESSION = 0.93
# Lengths of the anti-aliasing filter used before downsampling (odd, so it has a centre tap).
_LOW_PASS_TAPS = 63


@dataclass(frozen=True)
class DecodedAudio:
    """Mono int16 `samples` at `rate`, and the length of the original audio in seconds."""

    samples: NDArray[np.int16]
    rate: int
    seconds: float


def decode_audio(data: bytes, rate: int = 16000) -> DecodedAudio:
    """`data` (any format libsndfile reads) as mono int16 samples at `rate`. TranscriptionRejected when the
    bytes are empty, are not audio libsndfile knows, or hold no frames."""
    # optional: the offline voice packages are not in the layer (make chat and the tests only)
    import numpy as np
    import soundfile as sf

    if not data:
        raise TranscriptionRejected("the audio is empty")
    try:
        frames, source_rate = sf.read(io.BytesIO(data), dtype="float32", always_2d=True)
    except sf.LibsndfileError as error:
        # Its error_string is libsndfile's own reason, without the stream's repr that str() adds.
        raise TranscriptionRejected(f"not audio that can be decoded: {error.error_string}") from None
    except (RuntimeError, TypeError, ValueError) as error:
        raise TranscriptionRejected(f"not audio that can be decoded: {_short(error)}") from None
    if frames.shape[0] == 0 or source_rate <= 0:
        raise TranscriptionRejected("the audio has no frames")
    mono = frames.mean(axis=1, dtype=np.float32)
    resampled = _resample(mono, int(source_rate), rate)
    samples = np.clip(np.rint(resampled * 32767.0), -32768, 32767).astype(np.int16)
    return DecodedAudio(samples=samples, rate=rate, seconds=frames.shape[0] / float(source_rate))


def is_silent(samples: NDArray[np.int16], rate: int = 16000, threshold_dbfs: float = -40.0) -> bool:
    """True when no 50 ms stretch of `samples` is louder (RMS) than `threshold_dbfs`: an empty note, digital
    silence or a quiet room. Speech peaks well above -30 dBFS; a phone's noise floor is near -60 dBFS."""
    # optional: the offline voice packages are not in the layer (make chat and the tests only)
    import numpy as np

    if samples.size == 0:
        return True
    frame = max(1, rate // 20)
    count = math.ceil(samples.size / frame)
    padded = np.zeros(count * frame, dtype=np.float64)
    padded[: samples.size] = samples
    loudest = float(np.sqrt(np.mean(np.square(padded.reshape(count, frame)), axis=1)).max())
    return bool(loudest <= 32768.0 * 10.0 ** (threshold_dbfs / 20.0))


def encode_ogg_opus(
    samples: NDArray[np.int16], rate: int, compression_level: float = SPEECH_COMPRESSION
) -> bytes:
    """Mono int16 `samples` at `rate` as Ogg Opus bytes; rates Opus does not take are resampled to 48 kHz
    first. `compression_level` is libsndfile's (0.0 to 1.0: higher is smaller)."""
    # optional: the offline voice packages are not in the layer (make chat and the tests only)
    import numpy as np
    import soundfile as sf

    mono = np.asarray(samples, dtype=np.int16).reshape(-1)
    if rate not in OPUS_RATES:
        floats = _resample(mono.astype(np.float32) / 32768.0, rate, _OPUS_FALLBACK_RATE)
        mono = np.clip(np.rint(floats * 32767.0), -32768, 32767).astype(np.int16)
        rate = _OPUS_FALLBACK_RATE
    buffer = io.BytesIO()
    sf.write(buffer, mono, rate, format="OGG", subtype="OPUS", compression_level=compression_level)
    return buffer.getvalue()


def _resample(samples: NDArray[np.float32], source: int, target: int) -> NDArray[np.float32]:
    """`samples` at `source` Hz as `target` Hz: low-pass first when going down (so high frequencies do not
    fold back into speech), then linear interpolation."""
    # optional: the offline voice packages are not in the layer (make chat and the tests only)
    import numpy as np

    if source == target or samples.size == 0:
        return samples
    if target < source:
        samples = _low_pass(samples, cutoff=0.5 * target / source)
    count = max(1, round(samples.size * target / source))
    positions = np.arange(count, dtype=np.float64) * (source / target)
    return np.interp(positions, np.arange(samples.size, dtype=np.float64), samples).astype(np.float32)


def _low_pass(samples: NDArray[np.float32], cutoff: float) -> NDArray[np.float32]:
    """A windowed-sinc low-pass at `cutoff` (a fraction of the sample rate, below 0.5)."""
    # optional: the offline voice packages are not in the layer (make chat and the tests only)
    import numpy as np

    middle = _LOW_PASS_TAPS // 2
    n = np.arange(_LOW_PASS_TAPS, dtype=np.float64) - middle
    taps = 2.0 * cutoff * np.sinc(2.0 * cutoff * n) * np.hamming(_LOW_PASS_TAPS)
    taps /= taps.sum()
    filtered = np.convolve(samples, taps.astype(np.float32), mode="full")[middle : middle + samples.size]
    return filtered.astype(np.float32)


def _short(error: Exception) -> str:
    """The first line of `error`, cut short."""
    text = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
    return text[:120]
