"""The byte stream of a fully interruptible pointer table: its entries, prefixes attached, read lazily.

The format is described in `gctoy.coreclr.ptrtab_full`.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

from ..errors import DecodeError
from .codecs import U32_MAX, GCInfoEncodeError, decode_unsigned
from .entries import REG_NUMBERS

#: The VM keeps pushed-argument bits in a 1024-bit vector; deeper stacks are fatal there.
MAX_PTRARG_OFS = 1024
#: ESP's register number (it never holds a GC pointer).
ESP_NUMBER = 4
#: Codes the format reserves: a table containing one is invalid.
RESERVED_CODES = frozenset({0xB9, 0xBA, 0xBB, 0xBD, 0xBE, 0xFA, 0xFB, 0xFE})


class InvalidTable(Exception):
    """A rule of the format is broken; the caller turns it into DecodeError/GCInfoEncodeError."""


#: What one entry does.
OpKind = Literal["reg-live", "reg-dead", "push", "push-non-ptr", "pop", "kill", "skip", "prefix", "end"]
#: The entries with an Unsigned operand, by code.
_LONG_FORMS: dict[int, OpKind] = {0xF8: "push", 0xF9: "push-non-ptr", 0xFC: "pop", 0xFD: "kill"}


@dataclass(frozen=True)
class Op:
    """One entry of the byte stream after prefixes were attached to their target."""

    start: int
    end: int
    before: int  # running code offset before the entry's delta
    after: int  # running code offset after it
    kind: OpKind
    value: int = 0  # register number, slot or count
    interior: bool = False
    this: bool = False


def read_ops(data: bytes, offset: int) -> Iterator[Op]:
    """Read entries lazily from `offset`, validating prefixes and opcodes; stops after 0xFF."""
    if offset < 0:
        raise DecodeError(0, f"pointer table offset {offset} is negative")
    pos = offset
    code = 0
    prefix_this = prefix_iptr = False
    prefix_start = -1
    while True:
        if pos >= len(data):
            raise DecodeError(pos, "pointer table runs past the end of the data (no 0xFF terminator)")
        start = pos
        b = data[pos]
        pos += 1
        kind: OpKind
        value = 0
        delta = 0
        if b in RESERVED_CODES:
            raise DecodeError(start, f"invalid fully interruptible table opcode {b:#04x}")
        if b < 0x80:
            regnum = (b >> 3) & 7
            if regnum == ESP_NUMBER:
                raise DecodeError(start, f"byte {b:#04x} names ESP (RRR=100), which is reserved")
            kind, value, delta = ("reg-live" if b & 0x40 else "reg-dead"), regnum, b & 7
        elif b == 0xFF:
            kind = "end"
        elif b in (0xBC, 0xBF):
            if (b == 0xBC and prefix_this) or (b == 0xBF and prefix_iptr):
                raise DecodeError(start, f"prefix {b:#04x} repeated")
            prefix_this |= b == 0xBC
            prefix_iptr |= b == 0xBF
            prefix_start = start if prefix_start < 0 else prefix_start
            yield Op(start, pos, code, code, "prefix")
            continue
        elif b == 0xB8:
            delta, pos = decode_unsigned(data, pos)
            kind = "skip"
        elif 0xF0 <= b <= 0xF7:
            kind, delta = "skip", ((b & 7) + 1) * 8
        elif b in (0xF8, 0xF9, 0xFC, 0xFD):
            value, pos = decode_unsigned(data, pos)
            kind = _LONG_FORMS[b]
            if b == 0xFC and value == 0:
                kind = "skip"
            if b in (0xF9, 0xFD) and value == 0:
                raise DecodeError(start, f"{b:#04x} with a count of zero")
        else:
            slot, delta = (b >> 3) & 7, b & 7
            if b & 0x40:
                kind, value = ("pop", slot) if slot else ("skip", 0)
            elif slot == 6:
                kind, value = "push-non-ptr", 1
            else:
                kind, value = "push", slot
        if prefix_this or prefix_iptr:
            if kind not in ("reg-live", "push"):
                raise DecodeError(
                    start, f"prefix at {prefix_start:#x} must precede a register going live or a pointer push"
                )
        if code + delta > U32_MAX:
            raise DecodeError(start, "running code offset does not fit in 32 bits")
        yield Op(start, pos, code, code + delta, kind, value, prefix_iptr, prefix_this)
        code += delta
        prefix_this = prefix_iptr = False
        prefix_start = -1
        if kind == "end":
            return


def register_number(reg: str) -> int:
    """The register number of `reg`, which must be able to hold a tracked GC pointer."""
    number = REG_NUMBERS.get(reg)
    if number is None or number == ESP_NUMBER:
        raise GCInfoEncodeError(
            f"register {reg!r} cannot hold a tracked GC pointer (use one of EAX ECX EDX EBX EBP ESI EDI)"
        )
    return number
