"""The ``.gcinfo_x86`` image section: a method table in front of the methods' GC-info blobs.

::

    u32 count
    count x { u32 code start, u32 code size, u32 blob offset (from the section start), u32 blob size }
    the blobs, one after the other
"""

from __future__ import annotations

import struct

from ..errors import DecodeError

GCINFO_SECTION = ".gcinfo_x86"
_ENTRY = struct.Struct("<IIII")


def pack_gcinfo_section(methods: list[tuple[int, int, bytes]]) -> bytes:
    """The section of ``(code start, code size, blob)`` per method: the method table, then the blobs."""
    table = bytearray(struct.pack("<I", len(methods)))
    cursor = 4 + _ENTRY.size * len(methods)
    for start, size, blob in methods:
        table += _ENTRY.pack(start, size, cursor, len(blob))
        cursor += len(blob)
    return bytes(table) + b"".join(blob for _, _, blob in methods)


def read_gcinfo_section(data: bytes) -> list[tuple[int, int, bytes]]:
    """``(code start, code size, blob)`` per method of a ``.gcinfo_x86`` section."""
    if len(data) < 4:
        raise DecodeError(0, "the GC info section is shorter than its count")
    (count,) = struct.unpack_from("<I", data, 0)
    if 4 + _ENTRY.size * count > len(data):
        raise DecodeError(4, f"the method table of {count} entries does not fit the section")
    out = []
    for i in range(count):
        start, size, at, length = _ENTRY.unpack_from(data, 4 + _ENTRY.size * i)
        if at + length > len(data):
            raise DecodeError(4 + _ENTRY.size * i, f"method {i}'s blob runs past the section's end")
        out.append((start, size, bytes(data[at : at + length])))
    return out
