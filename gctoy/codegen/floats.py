"""Floating-point values in the x86-64 code generator: bit patterns in integer slots, SysV argument classes.

A ``half``/``float``/``double`` value's 8-byte slot holds its IEEE bit pattern, zero-extended
like an integer of the same width, so every move (calls, phis, selects, loads, stores, stack
maps) is an integer move. Arithmetic, comparisons and conversions of ``float`` and ``double``
(:class:`FloatLowering`) move the bits into xmm0/xmm1, use the SSE2 instruction and move the
result's bits back. Only the SysV boundary differs from integers:

* arguments: integers and pointers take rdi, rsi, rdx, rcx, r8, r9 in order; floating-point
  arguments take xmm0..xmm7 in their own order; the rest go to the stack, left to right;
* a floating-point result comes back in xmm0 (``movq rax, xmm0`` moves its bits to rax).
"""

from __future__ import annotations

import math
import struct
from collections.abc import Sequence
from typing import TYPE_CHECKING, TypeGuard

from ..ir import instructions as I
from ..ir.types import FloatType, IntType, Type
from ..ir.values import ConstantFloat, Value
from .frame import ARG_REGISTERS, XMM_ARG_REGISTERS, CodegenError

FLOAT_BITS = {"half": 16, "float": 32, "double": 64}


def is_float(ty: Type) -> TypeGuard[FloatType]:
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
    assert isinstance(c.type, FloatType), c.type  # the parser gives a floating-point constant its float type
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
        raise CodegenError(
            f"floating-point constant {c.type} {text} is not understood by the x86-64 code generator"
        ) from None
    return _pack(value, bits)


def argument_registers(args: Sequence[Value]) -> list[str | int]:
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


#: SSE2 suffix by width: scalar single or double
_SUFFIX = {32: "ss", 64: "sd"}
_ARITH = {"fadd": "add", "fsub": "sub", "fmul": "mul", "fdiv": "div"}
#: fcmp predicate -> (swap the operands, the setcc conditions and how to combine two of them),
#: after ``ucomis[sd] a, b``: unordered sets ZF, PF and CF; a < b sets CF; a == b sets ZF
_FCMP = {
    "ogt": (False, ("a",), ""),
    "oge": (False, ("ae",), ""),
    "olt": (True, ("a",), ""),
    "ole": (True, ("ae",), ""),
    "oeq": (False, ("e", "np"), "and"),
    "one": (False, ("ne", "np"), "and"),
    "ueq": (False, ("e",), ""),
    "une": (False, ("ne", "p"), "or"),
    "ugt": (True, ("b",), ""),
    "uge": (True, ("be",), ""),
    "ult": (False, ("b",), ""),
    "ule": (False, ("be",), ""),
    "ord": (False, ("np",), ""),
    "uno": (False, ("p",), ""),
}


class FloatLowering:
    """Floating-point arithmetic, comparisons and conversions of the x86-64 lowering (mixed into it)."""

    lines: list[str]

    if TYPE_CHECKING:  # provided by the lowering class (lowering64.py, lowering_core.py, wide.py)

        def emit(self, line: str) -> None: ...
        def load(self, dest: str, v: Value) -> None: ...
        def store(self, v: Value, reg: str = "rax") -> None: ...
        def result(self, inst: I.Instruction, dest: str | None = None) -> None: ...
        def sign_extend(self, bits: int, reg: str = "rax") -> None: ...
        def _wide_label(self) -> str: ...

    def float_method(self, inst: I.Instruction):
        """The lowering of a floating-point operation (None: not one)."""
        if isinstance(inst, I.FCmp):
            return self._fcmp
        if isinstance(inst, I.FNeg):
            return self._fneg
        if isinstance(inst, I.BinaryOp) and inst.opcode in _ARITH or getattr(inst, "opcode", "") == "frem":
            return self._farith
        if isinstance(inst, I.Cast) and inst.opcode in ("sitofp", "uitofp", "fptosi", "fptoui", "fpext", "fptrunc"):
            return self._fconvert
        return None

    def _sse_width(self, ty: Type) -> int:
        bits = float_width(ty) if is_float(ty) else 0
        if bits not in _SUFFIX:
            raise CodegenError(f"floating-point operations on {ty} are not supported by the x86-64 code generator")
        return bits

    def _to_xmm(self, xmm: str, v: Value) -> None:
        self.load("rax", v)
        self.emit(f"movq {xmm}, rax")

    def _farith(self, inst: I.BinaryOp) -> None:
        if inst.opcode not in _ARITH:
            raise CodegenError(f"'{inst.opcode}' is not supported by the x86-64 code generator")
        sfx = _SUFFIX[self._sse_width(inst.type)]
        self._to_xmm("xmm0", inst.ops[0])
        self._to_xmm("xmm1", inst.ops[1])
        self.emit(f"{_ARITH[inst.opcode]}{sfx} xmm0, xmm1")
        self.emit("movq rax, xmm0")
        self.result(inst)

    def _fneg(self, inst: I.FNeg) -> None:
        bits = self._sse_width(inst.type)
        self.load("rax", inst.ops[0])
        self.emit(f"btc rax, {bits - 1}")
        self.result(inst)

    def _fcmp(self, inst: I.FCmp) -> None:
        sfx = _SUFFIX[self._sse_width(inst.ops[0].type)]
        pred = inst.predicate
        if pred in ("true", "false"):
            self.emit(f"mov eax, {int(pred == 'true')}")
            self.store(inst)
            return
        swap, conds, combine = _FCMP[pred]
        a, b = (inst.ops[1], inst.ops[0]) if swap else (inst.ops[0], inst.ops[1])
        self._to_xmm("xmm0", a)
        self._to_xmm("xmm1", b)
        self.emit(f"ucomi{sfx} xmm0, xmm1")
        self.emit(f"set{conds[0]} al")
        if combine:
            self.emit(f"set{conds[1]} cl")
            self.emit(f"{combine} al, cl")
        self.emit("movzx eax, al")
        self.store(inst)

    def _fconvert(self, inst: I.Cast) -> None:
        op, src = inst.opcode, inst.value
        self.load("rax", src)
        if op in ("sitofp", "uitofp"):
            bits = src.type.bits if isinstance(src.type, IntType) else 64
            sfx = _SUFFIX[self._sse_width(inst.type)]
            if op == "sitofp":
                self.sign_extend(bits, "rax")
            if op == "uitofp" and bits == 64:
                self._u64_to_float(sfx)
            else:
                self.emit(f"cvtsi2{sfx} xmm0, rax")
            self.emit("movq rax, xmm0")
        elif op in ("fptosi", "fptoui"):
            sfx = _SUFFIX[self._sse_width(src.type)]
            self.emit("movq xmm0, rax")
            self.emit(f"cvtt{sfx}2si rax, xmm0")
        else:
            src_sfx, dst_sfx = _SUFFIX[self._sse_width(src.type)], _SUFFIX[self._sse_width(inst.type)]
            self.emit("movq xmm0, rax")
            self.emit(f"cvt{src_sfx}2{dst_sfx} xmm0, xmm0")
            self.emit("movq rax, xmm0")
        self.result(inst)

    def _u64_to_float(self, sfx: str) -> None:
        """rax as an unsigned 64-bit integer into xmm0: halve (keeping the low bit) when the top bit is set, double after."""
        big, done = self._wide_label(), self._wide_label()
        self.emit("test rax, rax")
        self.emit(f"js {big}")
        self.emit(f"cvtsi2{sfx} xmm0, rax")
        self.emit(f"jmp {done}")
        self.lines.append(f"{big}:")
        self.emit("mov rcx, rax")
        self.emit("shr rcx, 1")
        self.emit("and eax, 1")
        self.emit("or rcx, rax")
        self.emit(f"cvtsi2{sfx} xmm0, rcx")
        self.emit(f"add{sfx} xmm0, xmm0")
        self.lines.append(f"{done}:")


__all__ = ["FLOAT_BITS", "FloatLowering", "argument_registers", "float_bits", "float_width", "is_float"]
