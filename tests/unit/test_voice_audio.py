"""Offline audio for voice notes: decoding, silence, Ogg Opus encoding, pocketsphinx recognition and eSpeak
speech. Everything here runs on this machine with the packages' own models (no network, no key): the
recognition tests belong in the unit suite."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from stepwise.voice import local_tts
from stepwise.voice.audio import decode_audio, encode_ogg_opus, is_silent
from stepwise.voice.local_stt import PocketSphinxTranscriber
from stepwise.voice.local_tts import EspeakSpeaker, speak_to_wav
from stepwise.voice.models import SpeechError, TranscriptionRejected

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "voice"
SPOKEN = {"remind_me.ogg": 2.7, "add_milk.ogg": 2.35, "hello.ogg": 1.9}


def fixture(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


def tone(seconds: float, rate: int, channels: int = 1, amplitude: float = 0.5) -> np.ndarray:
    """A 440 Hz sine as float samples, shaped (frames, channels)."""
    t = np.arange(round(seconds * rate)) / rate
    wave = amplitude * np.sin(2 * np.pi * 440 * t)
    return np.repeat(wave[:, None], channels, axis=1)


def encoded(samples: np.ndarray, rate: int, format: str, subtype: str) -> bytes:
    buffer = io.BytesIO()
    sf.write(buffer, samples, rate, format=format, subtype=subtype)
    return buffer.getvalue()


@pytest.fixture(scope="module")
def transcriber() -> PocketSphinxTranscriber:
    """One transcriber for the module: its decoder is made once, as in a warm process."""
    return PocketSphinxTranscriber()


def transcribe(transcriber: PocketSphinxTranscriber, audio: bytes) -> str:
    return transcriber.transcribe(audio, job_id="42", mime_type="audio/ogg", file_name=None).text


# --- the fixtures themselves


@pytest.mark.parametrize("name", [*SPOKEN, "silence.ogg"])
def test_fixtures_are_mono_ogg_opus_of_a_few_kilobytes(name: str) -> None:
    # Given a voice fixture, as Telegram would send a voice note
    data = fixture(name)
    # When libsndfile describes it
    info = sf.info(io.BytesIO(data))
    # Then it is small mono Ogg Opus
    assert (info.format, info.subtype, info.channels) == ("OGG", "OPUS", 1)
    assert info.samplerate in {16000, 48000}
    assert len(data) < 16_000


# --- decoding


@pytest.mark.parametrize(("name", "seconds"), SPOKEN.items())
def test_a_spoken_fixture_decodes_to_mono_int16_at_the_asked_rate(name: str, seconds: float) -> None:
    # Given a 48 kHz Ogg Opus voice note
    # When it is decoded for a 16 kHz recogniser
    audio = decode_audio(fixture(name), rate=16000)
    # Then the samples are one channel of int16 at 16 kHz, as long as the note, and not silent
    assert audio.samples.ndim == 1
    assert audio.samples.dtype == np.int16
    assert audio.rate == 16000
    assert audio.seconds == pytest.approx(seconds, abs=0.1)
    assert audio.samples.size == pytest.approx(audio.seconds * 16000, abs=16)
    assert not is_silent(audio.samples, audio.rate)


def test_the_silent_fixture_decodes_and_is_silent() -> None:
    # Given three seconds of silence as Ogg Opus
    # When it is decoded
    audio = decode_audio(fixture("silence.ogg"))
    # Then it lasts three seconds and counts as silent
    assert audio.seconds == pytest.approx(3.0, abs=0.05)
    assert is_silent(audio.samples, audio.rate)


def test_a_rate_can_be_asked_for_other_than_the_file_s() -> None:
    # Given a 48 kHz note
    # When it is decoded at 8 kHz and at 48 kHz
    low = decode_audio(fixture("hello.ogg"), rate=8000)
    full = decode_audio(fixture("hello.ogg"), rate=48000)
    # Then the lengths follow the rates and the duration is the note's
    assert low.samples.size == pytest.approx(full.samples.size / 6, abs=2)
    assert low.seconds == full.seconds


@pytest.mark.parametrize(
    ("format", "subtype"),
    [("WAV", "PCM_16"), ("FLAC", "PCM_16"), ("OGG", "VORBIS"), ("MP3", "MPEG_LAYER_III")],
)
def test_other_formats_in_stereo_are_mixed_down_and_resampled(format: str, subtype: str) -> None:
    # Given one second of a stereo tone at 44.1 kHz in another format
    data = encoded(tone(1.0, 44100, channels=2), 44100, format, subtype)
    # When it is decoded
    audio = decode_audio(data, rate=16000)
    # Then it is one mono second at 16 kHz with the tone's loudness (half of full scale)
    assert audio.samples.shape == (16000,)
    assert audio.seconds == pytest.approx(1.0, abs=0.06)
    assert np.abs(audio.samples).max() == pytest.approx(16384, rel=0.1)


def test_opposite_channels_mix_down_to_silence() -> None:
    # Given a stereo file whose right channel is the left one inverted
    left = tone(0.5, 16000)
    data = encoded(np.hstack([left, -left]), 16000, "WAV", "PCM_16")
    # When it is decoded
    audio = decode_audio(data)
    # Then the channels were averaged, not one of them taken
    assert is_silent(audio.samples, audio.rate)


def test_downsampling_keeps_speech_frequencies_and_drops_those_above_the_new_limit() -> None:
    # Given 48 kHz tones at 1 kHz (speech) and at 15 kHz (above 8 kHz, the limit at 16 kHz)
    t = np.arange(48000) / 48000
    speech = encoded(0.5 * np.sin(2 * np.pi * 1000 * t), 48000, "WAV", "PCM_16")
    high = encoded(0.5 * np.sin(2 * np.pi * 15000 * t), 48000, "WAV", "PCM_16")
    # When both are decoded at 16 kHz
    kept = decode_audio(speech).samples.astype(np.float64)
    folded = decode_audio(high).samples.astype(np.float64)
    # Then the 1 kHz tone keeps its level and the 15 kHz one does not fold back as a loud 1 kHz tone
    assert np.sqrt(np.mean(kept**2)) == pytest.approx(0.5 * 32767 / np.sqrt(2), rel=0.05)
    assert np.sqrt(np.mean(folded**2)) < 0.05 * np.sqrt(np.mean(kept**2))


def test_not_audio_is_rejected() -> None:
    # Given a text file with an .ogg name
    # When it is decoded
    # Then it is rejected with a short reason
    with pytest.raises(TranscriptionRejected, match="not audio") as caught:
        decode_audio(fixture("not_audio.ogg"))
    assert "BytesIO" not in str(caught.value)


def test_empty_bytes_are_rejected() -> None:
    # Given no bytes at all
    # When they are decoded
    # Then they are rejected as empty
    with pytest.raises(TranscriptionRejected, match="empty"):
        decode_audio(b"")


def test_a_file_without_frames_is_rejected() -> None:
    # Given a valid WAV header with no samples
    data = encoded(np.zeros((0, 1)), 16000, "WAV", "PCM_16")
    # When it is decoded
    # Then it is rejected as having no frames
    with pytest.raises(TranscriptionRejected, match="no frames"):
        decode_audio(data)


# --- silence


def test_silence_is_told_by_loudness() -> None:
    # Given digital silence, a quiet hiss, nothing at all, and a quiet hiss with one short spoken-level tone
    rng = np.random.default_rng(7)
    hiss = (rng.standard_normal(16000) * 20).astype(np.int16)
    with_tone = hiss.copy()
    with_tone[8000:9600] += (tone(0.1, 16000, amplitude=0.1)[:, 0] * 32767).astype(np.int16)
    # When each is checked
    # Then only the one with the tone is not silent
    assert is_silent(np.zeros(16000, np.int16))
    assert is_silent(hiss)
    assert is_silent(np.zeros(0, np.int16))
    assert not is_silent(with_tone)


def test_the_silence_threshold_can_be_moved() -> None:
    # Given a steady tone at about -43 dBFS
    quiet = (tone(0.5, 16000, amplitude=0.01)[:, 0] * 32767).astype(np.int16)
    # When it is checked against -40 dBFS and against -50 dBFS
    # Then it is silent for the first and not for the second
    assert is_silent(quiet, threshold_dbfs=-40.0)
    assert not is_silent(quiet, threshold_dbfs=-50.0)


# --- encoding


@pytest.mark.parametrize("rate", [16000, 48000, 22050])
def test_encoded_samples_decode_back_to_the_same_length_and_level(rate: int) -> None:
    # Given a second of a tone as int16 at a rate Opus takes, and at one it does not (22.05 kHz, as eSpeak's)
    samples = (tone(1.0, rate)[:, 0] * 32767).astype(np.int16)
    # When it is encoded as Ogg Opus and decoded again
    data = encode_ogg_opus(samples, rate)
    info = sf.info(io.BytesIO(data))
    audio = decode_audio(data, rate=16000)
    # Then the file is mono Ogg Opus (at 48 kHz when the rate had to change) and the tone came back
    assert (info.format, info.subtype, info.channels) == ("OGG", "OPUS", 1)
    assert info.samplerate == (rate if rate != 22050 else 48000)
    assert audio.seconds == pytest.approx(1.0, abs=0.03)
    assert np.abs(audio.samples).max() == pytest.approx(16384, rel=0.15)


def test_a_lower_compression_level_makes_a_bigger_file() -> None:
    # Given two seconds of noise
    samples = (np.random.default_rng(3).standard_normal(32000) * 3000).astype(np.int16)
    # When it is encoded at the speech default and at libsndfile's highest quality
    small = encode_ogg_opus(samples, 16000)
    big = encode_ogg_opus(samples, 16000, compression_level=0.0)
    # Then the default is the smaller of the two
    assert len(small) < len(big) / 2


# --- offline recognition


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("remind_me.ogg", {"remind", "reminds", "call", "mom", "five", "pm"}),
        ("add_milk.ogg", {"add", "buy", "milk", "list"}),
        ("hello.ogg", {"hello", "how", "today"}),
    ],
)
def test_pocketsphinx_hears_some_of_the_words(
    transcriber: PocketSphinxTranscriber, name: str, expected: set[str]
) -> None:
    # Given a spoken voice note
    # When the offline transcriber hears it
    transcript = transcriber.transcribe(fixture(name), job_id="42", mime_type="audio/ogg", file_name=None)
    # Then some of the words said are in the transcript, and it says where it came from
    assert set(transcript.text.lower().split()) & expected, transcript.text
    assert transcript.transcriber == "local"
    assert transcript.language == "en"
    assert transcript.seconds == pytest.approx(SPOKEN[name], abs=0.1)


def test_pocketsphinx_hears_the_same_note_the_same_way_whatever_came_before(
    transcriber: PocketSphinxTranscriber,
) -> None:
    # Given a note heard once
    first = transcribe(transcriber, fixture("remind_me.ogg"))
    # When other notes are heard and then the same note again
    transcribe(transcriber, fixture("hello.ogg"))
    transcribe(transcriber, fixture("add_milk.ogg"))
    again = transcribe(transcriber, fixture("remind_me.ogg"))
    # Then the words are the same (nothing carries over from one note to the next)
    assert again == first


def test_pocketsphinx_gives_no_words_for_silence(transcriber: PocketSphinxTranscriber) -> None:
    # Given a silent note
    # When it is transcribed
    transcript = transcriber.transcribe(fixture("silence.ogg"), job_id="1", mime_type=None, file_name=None)
    # Then there are no words, but the length is known
    assert transcript.text == ""
    assert transcript.seconds == pytest.approx(3.0, abs=0.05)


@pytest.mark.parametrize("data", [b"", b"not audio", pytest.param(None, id="not_audio.ogg")])
def test_pocketsphinx_rejects_what_is_not_audio(
    transcriber: PocketSphinxTranscriber, data: bytes | None
) -> None:
    # Given bytes that are not audio
    audio = fixture("not_audio.ogg") if data is None else data
    # When they are transcribed
    # Then the transcriber refuses them for good
    with pytest.raises(TranscriptionRejected):
        transcriber.transcribe(audio, job_id="1", mime_type="audio/ogg", file_name="voice.ogg")


def test_a_silent_note_needs_no_recogniser(monkeypatch: pytest.MonkeyPatch) -> None:
    # Given a new transcriber on a machine without pocketsphinx
    monkeypatch.setitem(sys.modules, "pocketsphinx", None)
    fresh = PocketSphinxTranscriber()
    # When it gets a silent note, then a spoken one
    silent = fresh.transcribe(fixture("silence.ogg"), job_id="1", mime_type=None, file_name=None)
    # Then the silent one is "" without the recogniser, and the spoken one is refused for good
    assert silent.text == ""
    with pytest.raises(TranscriptionRejected, match="pocketsphinx"):
        fresh.transcribe(fixture("hello.ogg"), job_id="2", mime_type=None, file_name=None)


# --- offline speech


def test_espeak_speaks_ogg_opus_that_grows_with_the_text() -> None:
    # Given a short and a longer text
    speaker = EspeakSpeaker()
    short_text = "hello"
    long_text = "hello, this is a much longer sentence that takes a few seconds to say"
    # When both are spoken
    short = speaker.synthesize(short_text)
    long = speaker.synthesize(long_text)
    # Then both are mono Ogg Opus of the length they say, the longer text takes longer, and the characters
    # are counted
    for spoken in (short, long):
        info = sf.info(io.BytesIO(spoken.ogg_opus))
        assert (info.format, info.subtype, info.channels) == ("OGG", "OPUS", 1)
        assert info.duration == pytest.approx(spoken.seconds, abs=0.05)
    assert 0.2 < short.seconds < long.seconds
    assert long.seconds > 2 * short.seconds
    assert (short.characters, long.characters) == (len(short_text), len(long_text))


def test_espeak_speech_is_heard_back_by_pocketsphinx(transcriber: PocketSphinxTranscriber) -> None:
    # Given a sentence spoken by the offline speaker with its default voice
    spoken = EspeakSpeaker().synthesize("hello, how are you today")
    # When the offline transcriber hears it
    text = transcribe(transcriber, spoken.ogg_opus)
    # Then some of its words come back
    assert set(text.split()) & {"hello", "how", "are", "you", "today"}, text


def test_speak_to_wav_gives_int16_samples_and_their_rate() -> None:
    # Given a sentence
    # When it is spoken to samples
    samples, rate = speak_to_wav("remind me to call mom at five pm")
    # Then they are mono int16 at eSpeak's rate, a couple of seconds long and not silent
    assert samples.dtype == np.int16
    assert samples.ndim == 1
    assert rate == 22050
    assert 1.0 < samples.size / rate < 5.0
    assert not is_silent(samples, rate)


def test_espeak_refuses_an_unknown_voice() -> None:
    # Given a voice eSpeak NG does not have
    speaker = EspeakSpeaker(voice="no-such-voice")
    # When text is spoken
    # Then it is a speech error
    with pytest.raises(SpeechError, match="voice"):
        speaker.synthesize("hello")


def test_espeak_refuses_text_with_nothing_to_say() -> None:
    # Given text without words
    # When it is spoken
    # Then it is a speech error, not an empty voice note
    with pytest.raises(SpeechError):
        EspeakSpeaker().synthesize("")


def test_a_missing_espeakng_loader_package_is_a_speech_error(monkeypatch: pytest.MonkeyPatch) -> None:
    # Given a process where eSpeak NG was never loaded and espeakng_loader cannot be imported
    monkeypatch.setattr(local_tts, "_engine", None)
    monkeypatch.setitem(sys.modules, "espeakng_loader", None)
    # When text is spoken
    # Then the speaker says what is missing
    with pytest.raises(SpeechError, match="offline speech needs the espeakng-loader package"):
        EspeakSpeaker().synthesize("hello")


def test_a_library_that_cannot_load_is_a_speech_error(monkeypatch: pytest.MonkeyPatch) -> None:
    # Given a process where eSpeak NG was never loaded and the package points at no library
    import espeakng_loader

    monkeypatch.setattr(local_tts, "_engine", None)
    monkeypatch.setattr(espeakng_loader, "get_library_path", lambda: "no-such-dir/libespeak-ng.so")
    # When text is spoken
    # Then it is the same speech error
    with pytest.raises(SpeechError, match="espeakng-loader"):
        EspeakSpeaker().synthesize("hello")
