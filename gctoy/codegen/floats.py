"""Floating-point values in the x86-64 code generator: bit patterns in integer slots, SysV argument classes.

gctoy does no floating-point arithmetic; it *moves* ``half``/``float``/``double`` values: from
and to calls, through phis, selects, loads and stores, into stack maps. A value's 8-byte slot
holds its IEEE bit pattern, zero-extended like an integer of the same width, so every move is
an integer move. Only the SysV boundary differs from integers:

* arguments: integers and pointers take rdi, rsi, rdx, rcx, r8, r9 in order; floating-point
  arguments take xmm0..xmm7 in their own order; the rest go to the stack, left to right;
* a floating-point result comes back in xmm0 (``movq rax, xmm0`` moves its bits to rax).
"""
from __future__ import annotations

import math
import struct

from ..ir.types import FloatType, Type
from ..ir.values import ConstantFloat, Value
from .frame import ARG_REGISTERS, XMM_ARG_REGISTERS, CodegenError

FLOAT_BITS = {"half": 16, "float": 32, "double": 64}


def is_float(ty: Type) -> bool:
    """Whether values of ``ty`` travel in xmm registers at calls."""
    return isinstance(ty, FloatType)


def float_width(ty: FloatType) -> int:
    """Bits of a floating-point type's value."""
    if ty.kind not in FLOAT_BITS:
        raise CodegenError(f"floating-point type {ty} is not supported by the x86-64 code generator")
    return FLOAT_BITS[ty.kind]


def _pack(value: float, bits: int) -> int:
    fmt = {16: "<e", 32: "<f", 64: "<d"}[bits]
    try:
        return int.from_bytes(struct.pack(fmt, value), "little")
    except OverflowError:  # finite in double, too large for the narrower format
        return int.from_bytes(struct.pack(fmt, math.copysign(math.inf, value)), "little")


def float_bits(c: ConstantFloat) -> int:
    """The IEEE bit pattern of a floating-point constant in its own width.

    LLVM spells ``float`` and ``double`` constants in decimal or as ``0x`` + 16 hex digits of the
    *double* holding the value, and ``half`` as ``0xH`` + 4 hex digits.
    """
    bits = float_width(c.type)
    text = c.text.strip()
    if text[:3] in ("0xH", "0xh"):
        return int("0x" + text[3:], 0) & 0xFFFF
    if text[:2] in ("0x", "0X"):
        raw = int(text[2:], 16)
        if bits == 64:
            return raw
        return _pack(struct.unpack("<d", raw.to_bytes(8, "little"))[0], bits)
    try:
        value = float(text)
    except ValueError:
        raise CodegenError(f"floating-point constant {c.type} {text} is not understood by the x86-64 "
                           "code generator") from None
    return _pack(value, bits)


def argument_registers(args: list[Value]) -> list[str | int]:
    """Where each argument goes: a register name, or the index of its 8-byte stack slot."""
    ints = floats = stack = 0
    out: list[str | int] = []
    for a in args:
        if is_float(a.type) and floats < XMM_ARG_REGISTERS:
            out.append(f"xmm{floats}")
            floats += 1
        elif not is_float(a.type) and ints < len(ARG_REGISTERS):
            out.append(ARG_REGISTERS[ints])
            ints += 1
        else:
            out.append(stack)
            stack += 1
    return out


__all__ = ["FLOAT_BITS", "argument_registers", "float_bits", "float_width", "is_float"]
