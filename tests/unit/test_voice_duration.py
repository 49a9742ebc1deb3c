"""A note's length read from its own bytes (stepwise.voice.duration), checked against libsndfile's reading."""

from __future__ import annotations

import io
import struct
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
from support.ogg import HEADER, lengthened, ogg_crc, page, pages

from stepwise.voice.duration import ChainedOgg, audio_seconds

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "voice"
SILENCE = (FIXTURES / "silence.ogg").read_bytes()


@pytest.mark.parametrize("name", ["silence.ogg", "hello.ogg", "remind_me.ogg", "add_milk.ogg"])
def test_an_ogg_opus_note_lasts_what_libsndfile_says_within_a_packet(name: str) -> None:
    data = (FIXTURES / name).read_bytes()
    assert audio_seconds(data) == pytest.approx(sf.info(io.BytesIO(data)).duration, abs=0.13)


def test_ten_minutes_of_ogg_opus_measure_ten_minutes() -> None:
    ten = lengthened(SILENCE, 600)
    assert sf.info(io.BytesIO(ten)).duration == pytest.approx(600, abs=1)
    assert audio_seconds(ten) == pytest.approx(600, abs=1)


def test_a_last_page_that_claims_a_short_length_does_not_hide_its_packets() -> None:
    # Every granule position rewritten to 1 s: the packets still hold ten minutes of audio.
    ten = lengthened(SILENCE, 600)
    out = bytearray()
    for sequence, (flags, granule, serial, rest) in enumerate(pages(ten)):
        out += page(flags, min(granule, 48_000), serial, sequence, rest)
    assert audio_seconds(bytes(out)) == pytest.approx(600, abs=1)


def test_a_damaged_page_in_the_middle_does_not_hide_the_pages_after_it() -> None:
    ten = lengthened(SILENCE, 600)
    middle = ten.find(b"OggS", len(ten) // 2)
    damaged = ten[:middle] + b"junk" + ten[middle + 4 :]
    assert audio_seconds(damaged) == pytest.approx(600, abs=2)


def test_a_short_note_chained_to_a_long_one_is_refused_not_measured_by_its_first_part() -> None:
    # A chained Ogg file: a second logical stream (its own serial number, its own headers) after the first
    # ends. Measured by its first stream alone, 1.9 s of "hello" hid ten minutes.
    hello = (FIXTURES / "hello.ogg").read_bytes()
    chained = hello + lengthened(SILENCE, 600)
    assert len({serial for _flags, _granule, serial, _rest in pages(chained)}) == 2
    with pytest.raises(ChainedOgg, match="2 logical streams"):
        audio_seconds(chained)


def test_a_second_stream_that_reuses_the_first_ones_serial_number_is_refused_too() -> None:
    hello = (FIXTURES / "hello.ogg").read_bytes()
    serial = pages(hello)[0][2]
    second = b"".join(
        page(flags, granule, serial, sequence, rest)
        for sequence, (flags, granule, _serial, rest) in enumerate(pages(lengthened(SILENCE, 600)))
    )
    with pytest.raises(ChainedOgg):
        audio_seconds(hello + second)


def test_two_copies_of_one_short_note_are_refused_as_well() -> None:
    # Refused whatever the parts' lengths: decoders disagree about a chained file (libsndfile reads the one
    # above as millions of years), and no Telegram client records one.
    hello = (FIXTURES / "hello.ogg").read_bytes()
    with pytest.raises(ChainedOgg):
        audio_seconds(hello + (FIXTURES / "add_milk.ogg").read_bytes())


def test_wav_and_flac_are_measured_from_their_headers() -> None:
    for fmt in ("WAV", "FLAC"):
        buffer = io.BytesIO()
        sf.write(buffer, np.zeros(8000 * 7, dtype=np.int16), 8000, format=fmt, subtype="PCM_16")
        assert audio_seconds(buffer.getvalue()) == pytest.approx(7.0)


def test_a_wav_whose_data_size_is_unset_counts_the_bytes_present() -> None:
    buffer = io.BytesIO()
    sf.write(buffer, np.zeros(16000 * 4, dtype=np.int16), 16000, format="WAV", subtype="PCM_16")
    data = bytearray(buffer.getvalue())
    at = data.find(b"data")
    data[at + 4 : at + 8] = struct.pack("<I", 0xFFFFFFFF)
    assert audio_seconds(bytes(data)) == pytest.approx(4.0)


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"OggS\x00\x02" + bytes(range(200)) * 20,  # Ogg's signature, then no page at all
        (FIXTURES / "not_audio.ogg").read_bytes(),
        b"ID3\x04\x00" + bytes(100),  # MP3: not measured here
    ],
)
def test_what_is_not_measured_here_is_none(data: bytes) -> None:
    assert audio_seconds(data) is None


def test_the_helper_writes_pages_libsndfile_accepts() -> None:
    first = pages(SILENCE)[0]
    rebuilt = page(first[0], first[1], first[2], 0, first[3])
    assert rebuilt[: HEADER.size - 1][:4] == b"OggS"
    assert struct.unpack_from("<I", rebuilt, 22)[0] == ogg_crc(rebuilt[:22] + bytes(4) + rebuilt[26:])
