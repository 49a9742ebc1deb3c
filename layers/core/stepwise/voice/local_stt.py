"""The offline transcriber for `make chat` and the tests: PocketSphinx 5 with the English model it ships.

It needs no network and no key, and it is rough (a clear short sentence comes out as a few right words); the
deployed bot uses a cloud transcriber.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from stepwise.voice.audio import decode_audio, is_silent
from stepwise.voice.models import Transcript, TranscriptionRejected

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

# The sample rate of the English model pocketsphinx ships.
MODEL_RATE = 16000


class PocketSphinxTranscriber:
    """Audio in, English words out, on this machine. The decoder (a third of a second to load its model) is
    made on the first note and reused; one note is decoded at a time."""

    name = "local"

    def __init__(self) -> None:
        self._decoder: Any = None
        self._lock = threading.Lock()

    def transcribe(
        self, audio: bytes, *, job_id: str, mime_type: str | None, file_name: str | None
    ) -> Transcript:
        """The words of `audio` ("" for a silent note); TranscriptionRejected when it is not audio or the
        recogniser is missing or fails."""
        decoded = decode_audio(audio, rate=MODEL_RATE)
        text = ""
        if not is_silent(decoded.samples, decoded.rate):
            with self._lock:
                decoder = self._ensure_decoder()
                try:
                    text = _recognise(decoder, decoded.samples)
                except RuntimeError as error:
                    raise TranscriptionRejected(f"the offline recogniser failed: {error}") from None
        return Transcript(text=text, seconds=decoded.seconds, transcriber=self.name, language="en")

    def _ensure_decoder(self) -> Any:
        """The decoder, made on first use (call with the lock held)."""
        if self._decoder is None:
            try:
                # optional: the offline voice packages are not in the layer (make chat and the tests only)
                from pocketsphinx import Decoder
            except ImportError:
                raise TranscriptionRejected("offline recognition needs the pocketsphinx package") from None
            # The default configuration is the shipped US English model; only errors go to the log.
            self._decoder = Decoder(loglevel="ERROR")
        return self._decoder


def _recognise(decoder: Any, samples: NDArray[np.int16]) -> str:
    """The decoder's best hypothesis for `samples` ("" when it heard nothing).

    The feature state is reset first and the whole note goes in as one utterance (`full_utt`), so the
    cepstral mean is measured over this note alone: fed in chunks, the decoder starts from a running mean
    carried over from earlier notes, recognises worse, and gives the same note different words each time.
    """
    decoder.reinit_feat()
    decoder.start_utt()
    decoder.process_raw(samples.tobytes(), full_utt=True)
    decoder.end_utt()
    hypothesis = decoder.hyp()
    return str(hypothesis.hypstr).strip() if hypothesis is not None else ""
