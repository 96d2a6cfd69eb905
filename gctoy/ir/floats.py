"""Floating-point constants as LLVM reads and prints them.

A constant is kept as the bit pattern of its own type.  LLVM's text has two spellings:

* ``half``, ``bfloat``, ``float`` and ``double`` constants are written as a *double*: a decimal
  literal (``1.5``) or the 16 hex digits of a double (``0x3FB99999A0000000``); a ``float`` takes
  only values a float holds exactly (``float 0.1`` is refused, as LLVM refuses it);
* ``half``, ``bfloat``, ``x86_fp80`` and ``fp128`` also have typed hex forms:
  ``0xH3C00``, ``0xR3F80``, ``0xK3FFF8000000000000000``, ``0xL<low 64 bits><high 64 bits>``.

LLVM prints a ``float``/``double`` in decimal (``1.500000e+00``, six digits after the point)
only when that text reads back as the same double; otherwise in hex.  ``half`` and ``bfloat``
are always printed in their typed hex form.  :func:`float_text` follows LLVM's algorithm
(``APFloat::toString`` with precision 6, including its truncation before rounding), so
``1e-06`` prints as ``0x3EB0C6F7A0B5ED8D`` exactly as ``opt`` prints it.
"""

from __future__ import annotations

import struct

#: bits of each floating-point type
FLOAT_BITS = {"half": 16, "bfloat": 16, "float": 32, "double": 64, "x86_fp80": 80, "fp128": 128}
#: the letter of each type's typed hex form (``0xH...``)
_HEX_LETTER = {"half": "H", "bfloat": "R", "x86_fp80": "K", "fp128": "L"}
#: mantissa bits of the types a double converts to
_MANTISSA = {"half": 10, "float": 23, "double": 52}


class FloatLiteralError(ValueError):
    """A literal that does not denote a value of the wanted type (the message is LLVM's)."""


def parse_float_literal(text: str, kind: str) -> int:
    """The bit pattern of ``text`` (a FLOAT or HEXFLOAT token) as a constant of type ``kind``."""
    if text[:2] in ("0x", "0X") and text[2:3] in ("H", "R", "K", "L", "M"):
        letter, digits = text[2], text[3:]
        if _HEX_LETTER.get(kind) != letter:
            raise FloatLiteralError(f"floating point constant does not have type '{kind}'")
        if letter == "K":
            return (int(digits[:4] or "0", 16) << 64) | int(digits[4:20] or "0", 16)
        if letter == "L":
            return (int(digits[16:32] or "0", 16) << 64) | int(digits[:16] or "0", 16)
        return int(digits, 16) & 0xFFFF
    if kind in ("x86_fp80", "fp128"):
        raise FloatLiteralError(f"floating point constant does not have type '{kind}'")
    if text[:2] in ("0x", "0X"):
        dbits = int(text[2:], 16) & 0xFFFF_FFFF_FFFF_FFFF
    else:
        dbits = struct.unpack("<Q", struct.pack("<d", float(text)))[0]
    bits = _from_double(dbits, kind)
    if bits is None:
        raise FloatLiteralError("floating point constant invalid for type")
    return bits


def float_text(kind: str, bits: int) -> str:
    """The constant as LLVM prints it."""
    if kind == "half" or kind == "bfloat":
        return f"0x{_HEX_LETTER[kind]}{bits:04X}"
    if kind == "x86_fp80":
        return f"0xK{bits >> 64:04X}{bits & 0xFFFF_FFFF_FFFF_FFFF:016X}"
    if kind == "fp128":
        return f"0xL{bits & 0xFFFF_FFFF_FFFF_FFFF:016X}{bits >> 64:016X}"
    dbits = bits if kind == "double" else _float_to_double(bits)
    value = struct.unpack("<d", struct.pack("<Q", dbits))[0]
    if value == value and value not in (float("inf"), float("-inf")):
        text = _to_string(dbits)
        if float(text) == value:
            return text
    return f"0x{dbits:X}"


def float_value(kind: str, bits: int) -> float:
    """The constant as a Python float (exact for half, bfloat, float and double)."""
    if kind == "double":
        return struct.unpack("<d", struct.pack("<Q", bits))[0]
    if kind == "float":
        return struct.unpack("<f", struct.pack("<I", bits))[0]
    if kind == "half":
        return struct.unpack("<e", struct.pack("<H", bits))[0]
    if kind == "bfloat":
        return struct.unpack("<f", struct.pack("<I", bits << 16))[0]
    raise ValueError(f"no Python float for '{kind}'")


# -- conversions ------------------------------------------------------------------------------


def _from_double(dbits: int, kind: str) -> int | None:
    """The double ``dbits`` converted exactly to ``kind``; None if the conversion loses information."""
    if kind == "double":
        return dbits
    if kind == "bfloat":
        fbits = _from_double(dbits, "float")
        if fbits is None or fbits & 0xFFFF:
            return None
        return fbits >> 16
    sign = dbits >> 63
    exp_field = (dbits >> 52) & 0x7FF
    mantissa = dbits & ((1 << 52) - 1)
    width, frac = FLOAT_BITS[kind], _MANTISSA[kind]
    if exp_field == 0x7FF and mantissa:  # NaN: the payload's low bits must be zero
        shift = 52 - frac
        if mantissa & ((1 << shift) - 1):
            return None
        exp_ones = (1 << (width - 1 - frac)) - 1
        return (sign << (width - 1)) | (exp_ones << frac) | (mantissa >> shift)
    value = struct.unpack("<d", struct.pack("<Q", dbits))[0]
    code = "<f" if kind == "float" else "<e"
    try:
        packed = struct.pack(code, value)
    except OverflowError:
        return None
    if struct.unpack(code, packed)[0] != value:
        return None
    return int.from_bytes(packed, "little")


def _float_to_double(fbits: int) -> int:
    """A float's bits widened to a double's (exact; NaN payloads kept, never quieted)."""
    sign, exp_field, mantissa = fbits >> 31, (fbits >> 23) & 0xFF, fbits & 0x7FFFFF
    if exp_field == 0xFF:
        return (sign << 63) | (0x7FF << 52) | (mantissa << 29)
    value = struct.unpack("<f", struct.pack("<I", fbits))[0]
    return struct.unpack("<Q", struct.pack("<d", value))[0]


# -- APFloat::toString(precision 6, no padding, keep zeros) for a double --------------------------

_PRECISION = 6


def _to_string(dbits: int) -> str:
    sign = "-" if dbits >> 63 else ""
    exp_field = (dbits >> 52) & 0x7FF
    mantissa = dbits & ((1 << 52) - 1)
    if exp_field == 0 and mantissa == 0:
        return f"{sign}0.{'0' * _PRECISION}e+00"
    if exp_field == 0:
        significand, exp = mantissa, -1022 - 52
    else:
        significand, exp = mantissa | (1 << 52), exp_field - 1023 - 52
    zeros = (significand & -significand).bit_length() - 1
    significand >>= zeros
    exp += zeros
    if exp > 0:
        significand <<= exp
        exp = 0
    elif exp < 0:
        significand *= 5**-exp  # N * 2^-e == N * 5^e * 10^-e
    # LLVM first drops whole decimal digits it estimates are not needed (truncating, no rounding)
    bits = significand.bit_length()
    required = (_PRECISION * 196 + 58) // 59
    if bits > required:
        tens = (bits - required) * 59 // 196
        if tens:
            exp += tens
            significand //= 10**tens
    digits = str(significand)
    stripped = digits.rstrip("0")
    exp += len(digits) - len(stripped)
    buffer = stripped[::-1]  # least significant digit first, as LLVM fills it
    buffer, exp = _adjust_to_precision(buffer, exp)
    n = len(buffer)
    exp += n - 1
    text = buffer[-1] + "." + buffer[-2::-1] if n > 1 else buffer[-1] + "."
    text += "0" * (_PRECISION - n + 1)
    exp_text = str(abs(exp)).rjust(2, "0")
    return f"{sign}{text}e{'+' if exp >= 0 else '-'}{exp_text}"


def _adjust_to_precision(buffer: str, exp: int) -> tuple[str, int]:
    """Round the digits (least significant first) to six, half up, as LLVM does."""
    n = len(buffer)
    if n <= _PRECISION:
        return buffer, exp
    first = n - _PRECISION
    if buffer[first - 1] < "5":
        while first < n and buffer[first] == "0":
            first += 1
        return buffer[first:], exp + first
    digits = list(buffer)
    for k in range(first, n):
        if digits[k] == "9":
            first += 1
        else:
            digits[k] = chr(ord(digits[k]) + 1)
            break
    if first == n:
        return "1", exp + first
    return "".join(digits[first:]), exp + first
