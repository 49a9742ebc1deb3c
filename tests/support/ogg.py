"""A long Ogg Opus note made quickly from a short real one: its audio pages repeated with their granule
positions, sequence numbers and checksums rewritten, so that libsndfile reads (and would decode) the result
as one note of the new length. Encoding ten minutes of audio takes seconds on a busy machine; this takes
milliseconds."""

from __future__ import annotations

import struct

HEADER = struct.Struct("<4sBBqIIIB")


def _crc_table() -> list[int]:
    table = []
    for byte in range(256):
        crc = byte << 24
        for _ in range(8):
            crc = ((crc << 1) ^ 0x04C11DB7) if crc & 0x80000000 else crc << 1
        table.append(crc & 0xFFFFFFFF)
    return table


TABLE = _crc_table()


def ogg_crc(page: bytes) -> int:
    """Ogg's page checksum (CRC-32, polynomial 0x04C11DB7, not reflected, no final xor)."""
    crc = 0
    for byte in page:
        crc = ((crc << 8) & 0xFFFFFFFF) ^ TABLE[((crc >> 24) & 0xFF) ^ byte]
    return crc


def pages(data: bytes) -> list[tuple[int, int, int, bytes]]:
    """(flags, granule, serial, lacing + body) of each page."""
    found, offset = [], 0
    while offset < len(data):
        _capture, _version, flags, granule, serial, _seq, _crc, count = HEADER.unpack_from(data, offset)
        lacing = data[offset + HEADER.size : offset + HEADER.size + count]
        end = offset + HEADER.size + count + sum(lacing)
        found.append((flags, granule, serial, data[offset + HEADER.size : end]))
        offset = end
    return found


def page(flags: int, granule: int, serial: int, sequence: int, rest: bytes) -> bytes:
    lacing_count = _lacing_count(rest)
    head = HEADER.pack(b"OggS", 0, flags, granule, serial, sequence, 0, lacing_count)
    raw = head + rest
    return raw[:22] + struct.pack("<I", ogg_crc(raw)) + raw[26:]


def _lacing_count(rest: bytes) -> int:
    # `rest` is the lacing values then the body: find how many lacing values make the body's length.
    for count in range(1, 256):
        if count + sum(rest[:count]) == len(rest):
            return count
    raise ValueError("not a page's lacing and body")


def lengthened(note: bytes, seconds: float) -> bytes:
    """`note` (a real Ogg Opus note of a few seconds) made `seconds` long by repeating its inner pages."""
    found = pages(note)
    heads, audio = found[:2], found[2:-1]  # the last page may be trimmed at the end: not repeated
    assert audio and not any(flags & 0x01 for flags, *_ in audio), "pages must hold whole packets"
    deltas, previous = [], 0
    for _flags, granule, _serial, _rest in found[2:-1]:
        deltas.append(granule - previous)
        previous = granule
    first = heads[0][3]
    pre_skip = struct.unpack_from("<H", first, _lacing_count(first) + 10)[0]  # OpusHead's pre-skip
    out = bytearray()
    sequence = 0
    for flags, granule, serial, rest in heads:
        out += page(flags, granule, serial, sequence, rest)
        sequence += 1
    total, index, target = 0, 0, int(seconds * 48_000) + pre_skip
    while total < target:
        flags, _granule, serial, rest = audio[index % len(audio)]
        total += deltas[index % len(deltas)]
        last = total >= target
        out += page((flags & ~0x04) | (0x04 if last else 0), total, serial, sequence, rest)
        sequence += 1
        index += 1
    return bytes(out)
