"""The primitive number encodings of CoreCLR's x86 GC info: Unsigned, Signed, UDelta, DWORD.

* **Unsigned**: groups of 7 bits, most significant group first; bit 7 of a byte set means
  "another byte follows". 0..127 take one byte, 128 is ``81 00``, 0x1234 is ``A4 34``.
* **Signed**: sign and magnitude. The first byte holds "more" in bit 7, the sign in bit 6 and the
  top 6 magnitude bits; later bytes carry 7 bits each. -4 is ``44``, 64 is ``80 40``, -64 is
  ``C0 40``; one byte covers -63..63, two bytes -8191..8191.
* **UDelta**: an Unsigned added to a running previous value (epilog starts, lifetimes).
* **DWORD**: 32-bit little-endian, unaligned (the large pointer-table forms).

Every value is a 32-bit quantity on the CoreCLR side, so decoding refuses a result that does not
fit (Unsigned and UDelta above 0xFFFFFFFF, Signed outside the int32 range) and bytes that run out,
raising `DecodeError` with the offset of the offending byte. Decoders accept the redundant forms
CoreCLR's decoders accept (leading ``80`` groups, ``40`` for minus zero); encoders always write
the shortest form, the way the JIT does.

Every decoder takes ``(data, offset)`` and returns ``(value, next_offset)``.
"""

from __future__ import annotations

from ..errors import DecodeError, GCToyError

U32_MAX = 0xFFFF_FFFF
I32_MIN = -(1 << 31)
I32_MAX = (1 << 31) - 1


class GCInfoEncodeError(GCToyError, ValueError):
    """A value that cannot be written in CoreCLR's x86 GC-info format (out of range or inconsistent)."""


def _check_u32(value: int, what: str) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= U32_MAX:
        raise GCInfoEncodeError(f"{what} must be an integer in 0..0xFFFFFFFF, got {value!r}")


# --------------------------------------------------------------------------- Unsigned


def encode_unsigned(value: int) -> bytes:
    """The shortest Unsigned encoding of ``value`` (0..0xFFFFFFFF)."""
    _check_u32(value, "Unsigned value")
    groups = [value & 0x7F]
    value >>= 7
    while value:
        groups.append(value & 0x7F)
        value >>= 7
    groups.reverse()
    return bytes([g | 0x80 for g in groups[:-1]] + [groups[-1]])


def decode_unsigned(data: bytes, offset: int = 0) -> tuple[int, int]:
    """Read one Unsigned at ``offset``; returns ``(value, next_offset)``."""
    start = offset
    value = 0
    while True:
        if offset >= len(data):
            raise DecodeError(offset, f"Unsigned starting at {start:#x} runs past the end of the data")
        b = data[offset]
        value = (value << 7) | (b & 0x7F)
        if value > U32_MAX:
            raise DecodeError(offset, f"Unsigned starting at {start:#x} does not fit in 32 bits")
        offset += 1
        if not b & 0x80:
            return value, offset


# --------------------------------------------------------------------------- Signed


def encode_signed(value: int) -> bytes:
    """The shortest Signed (sign-magnitude) encoding of ``value`` (int32 range)."""
    if not isinstance(value, int) or isinstance(value, bool) or not I32_MIN <= value <= I32_MAX:
        raise GCInfoEncodeError(f"Signed value must be an int32, got {value!r}")
    magnitude = -value if value < 0 else value
    groups = []
    while magnitude > 0x3F:
        groups.append(magnitude & 0x7F)
        magnitude >>= 7
    first = magnitude | (0x40 if value < 0 else 0)
    groups.append(first)
    groups.reverse()
    return bytes([g | 0x80 for g in groups[:-1]] + [groups[-1]])


def decode_signed(data: bytes, offset: int = 0) -> tuple[int, int]:
    """Read one Signed at ``offset``; returns ``(value, next_offset)``."""
    start = offset
    if offset >= len(data):
        raise DecodeError(offset, "Signed runs past the end of the data")
    b = data[offset]
    negative = bool(b & 0x40)
    magnitude = b & 0x3F
    offset += 1
    while b & 0x80:
        if offset >= len(data):
            raise DecodeError(offset, f"Signed starting at {start:#x} runs past the end of the data")
        b = data[offset]
        magnitude = (magnitude << 7) | (b & 0x7F)
        if magnitude > (1 << 31):
            raise DecodeError(offset, f"Signed starting at {start:#x} does not fit in 32 bits")
        offset += 1
    value = -magnitude if negative else magnitude
    if value > I32_MAX:
        raise DecodeError(offset - 1, f"Signed starting at {start:#x} does not fit in 32 bits")
    return value, offset


# --------------------------------------------------------------------------- UDelta


def encode_udelta(value: int, previous: int) -> bytes:
    """``value - previous`` as an Unsigned (``value`` must not be below ``previous``)."""
    _check_u32(value, "UDelta value")
    _check_u32(previous, "UDelta base")
    if value < previous:
        raise GCInfoEncodeError(f"UDelta value {value:#x} is below the previous value {previous:#x}")
    return encode_unsigned(value - previous)


def decode_udelta(data: bytes, offset: int, previous: int) -> tuple[int, int]:
    """Read one UDelta at ``offset`` and add it to ``previous``; returns ``(value, next_offset)``."""
    delta, end = decode_unsigned(data, offset)
    value = previous + delta
    if value > U32_MAX:
        raise DecodeError(offset, f"UDelta {delta:#x} + {previous:#x} does not fit in 32 bits")
    return value, end


# --------------------------------------------------------------------------- DWORD


def encode_dword(value: int) -> bytes:
    """``value`` (0..0xFFFFFFFF) as 4 little-endian bytes."""
    _check_u32(value, "DWORD value")
    return value.to_bytes(4, "little")


def decode_dword(data: bytes, offset: int = 0) -> tuple[int, int]:
    """Read a 32-bit little-endian value at ``offset``; returns ``(value, offset + 4)``."""
    if offset + 4 > len(data):
        raise DecodeError(min(offset, len(data)), "DWORD runs past the end of the data")
    return int.from_bytes(data[offset : offset + 4], "little"), offset + 4
