"""How long a downloaded note really lasts, read from its bytes (not from the update, which is the client's
word): checked against VOICE_MAX_SECONDS before anything is paid for its transcription.

Ogg (Opus, as Telegram records voice notes, and Vorbis): the pages are walked from the first to the last
(resynchronizing on the next `OggS` after a damaged page, as decoders do) and the length is the largest
granule position of the stream (48,000 a second for Opus, less its pre-skip; the identification header's rate
for Vorbis); for Opus also the frames of every audio packet counted from their TOC bytes, whichever is
longer. An Ogg file of more than one logical stream (a chained file: a second stream, with its own serial
number, after the first ends; or streams multiplexed side by side) raises `ChainedOgg`: its length is not its
first stream's, and decoders disagree about it (libsndfile reads one made of 1.9 s and 10 minutes as millions
of years), so the caller refuses it rather than measuring it (a damaged page's garbage read as a page of
another stream refuses the note too). WAV: the data chunk's size over the format's bytes a second. FLAC:
STREAMINFO's samples over its rate. Anything else (MP3, MP4, a file that is not what it claims) is not
measured: None, and the caller decides.

The standard library only (struct).
"""

from __future__ import annotations

import struct

OPUS_RATE = 48_000
_PAGE_HEADER = struct.Struct(
    "<4sBBqIIIB"
)  # capture, version, flags, granule, serial, sequence, crc, segments
_NO_GRANULE = -1  # a page on which no packet ends
_MAX_OPUS_PACKET = 0.120  # seconds: RFC 6716 caps a packet at 120 ms
_BEGINNING_OF_STREAM = 0x02  # the flag of a logical stream's first page


class ChainedOgg(ValueError):
    """An Ogg file that holds more than one logical stream: never measured (nor transcribed)."""


def audio_seconds(data: bytes) -> float | None:
    """The length of `data` in seconds, or None when its format is not one measured here (or it is damaged
    beyond reading its length). `ChainedOgg` for an Ogg file of more than one logical stream."""
    if data.startswith(b"OggS"):
        return _ogg_seconds(data)
    if data[:4] == b"RIFF" and data[8:12] == b"WAVE":
        return _wav_seconds(data)
    if data.startswith(b"fLaC"):
        return _flac_seconds(data)
    return None


def _ogg_pages(data: bytes) -> list[tuple[int, int, int, bytes, bytes]]:
    """Each well-formed page as (flags, granule, serial, lacing values, body); after a damaged page the walk
    goes on from the next capture pattern."""
    pages = []
    offset, end = 0, len(data)
    while offset + _PAGE_HEADER.size <= end:
        capture, version, flags, granule, serial, _sequence, _crc, count = _PAGE_HEADER.unpack_from(
            data, offset
        )
        lacing_start = offset + _PAGE_HEADER.size
        body_start = lacing_start + count
        lacing = data[lacing_start:body_start]
        body_end = body_start + sum(lacing)
        if capture != b"OggS" or version != 0 or len(lacing) != count or body_end > end:
            following = data.find(b"OggS", offset + 1)
            if following < 0:
                break
            offset = following
            continue
        pages.append((flags, granule, serial, lacing, data[body_start:body_end]))
        offset = body_end
    return pages


def _ogg_seconds(data: bytes) -> float | None:
    pages = _ogg_pages(data)
    if not pages:
        return None
    _flags, _granule, _serial, lacing, body = pages[0]
    serials = {page[2] for page in pages}
    beginnings = sum(1 for page in pages if page[0] & _BEGINNING_OF_STREAM)
    if len(serials) > 1 or beginnings > 1:
        raise ChainedOgg(f"{max(len(serials), beginnings)} logical streams in one Ogg file")
    first = body[: lacing[0]] if lacing else b""
    granules = [page[1] for page in pages if page[1] != _NO_GRANULE and page[1] >= 0]
    if first.startswith(b"OpusHead") and len(first) >= 12:
        pre_skip = int(struct.unpack_from("<H", first, 10)[0])
        by_granule = max(0, max(granules, default=0) - pre_skip) / OPUS_RATE
        return max(by_granule, _opus_packet_seconds(pages))
    if first.startswith(b"\x01vorbis") and len(first) >= 16:
        rate = int(struct.unpack_from("<I", first, 12)[0])
        return max(granules, default=0) / rate if rate else None
    return None


def _opus_packet_seconds(pages: list[tuple[int, int, int, bytes, bytes]]) -> float:
    """The audio of every Opus packet after the two headers, from each packet's TOC byte (RFC 6716 3.1)."""
    seconds = 0.0
    packet = 0  # packets started so far (the first two are OpusHead and OpusTags)
    for flags, _granule, _serial, lacing, body in pages:
        position = 0
        continuing = bool(flags & 0x01)  # the page starts with the rest of the previous page's packet
        starting = not continuing
        for value in lacing:
            if starting:
                packet += 1
                if packet > 2:
                    seconds += _opus_packet_length(body[position : position + 2])
            position += value
            starting = value < 255  # a lacing value under 255 ends the packet; the next one starts after it
    return seconds


def _opus_packet_length(head: bytes) -> float:
    """The seconds of audio a packet holds, from its first bytes (the TOC, and the frame count for code 3)."""
    if not head:
        return 0.0
    toc = head[0]
    config = toc >> 3
    if config < 12:  # SILK: 10, 20, 40, 60 ms
        frame = (0.010, 0.020, 0.040, 0.060)[config % 4]
    elif config < 16:  # Hybrid: 10, 20 ms
        frame = (0.010, 0.020)[config % 2]
    else:  # CELT: 2.5, 5, 10, 20 ms
        frame = (0.0025, 0.005, 0.010, 0.020)[config % 4]
    code = toc & 0x03
    if code == 0:
        frames = 1
    elif code in (1, 2):
        frames = 2
    elif len(head) > 1:
        frames = head[1] & 0x3F
    else:  # the frame count is on the next page: count the most a packet may hold
        return _MAX_OPUS_PACKET
    return min(frames * frame, _MAX_OPUS_PACKET)


def _wav_seconds(data: bytes) -> float | None:
    """The data chunk's bytes (its declared size, or the bytes present when the size is unset or too large)
    over the format's block size times its rate."""
    offset = 12
    bytes_per_second = 0
    while offset + 8 <= len(data):
        kind = data[offset : offset + 4]
        size = struct.unpack_from("<I", data, offset + 4)[0]
        body = offset + 8
        if kind == b"fmt " and size >= 16 and body + 16 <= len(data):
            rate = struct.unpack_from("<I", data, body + 4)[0]
            block = struct.unpack_from("<H", data, body + 12)[0]
            bytes_per_second = rate * block
        elif kind == b"data":
            if not bytes_per_second:
                return None
            present = len(data) - body
            length = present if size in (0, 0xFFFFFFFF) or size > present else size
            return length / bytes_per_second
        offset = body + size + (size & 1)  # chunks are padded to an even size
    return None


def _flac_seconds(data: bytes) -> float | None:
    """STREAMINFO (the first metadata block): 20 bits of sample rate and 36 bits of total samples."""
    if len(data) < 8 + 18 or data[4] & 0x7F != 0:
        return None
    info = data[8:26]
    packed = int.from_bytes(info[10:18], "big")
    rate = packed >> 44
    samples = packed & ((1 << 36) - 1)
    if not rate or not samples:
        return None
    return samples / rate
