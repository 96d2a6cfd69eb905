"""Where the SysV x86-64 calling convention puts wide values (vectors, i128, first-class aggregates), as LLVM does.

LLVM splits a value the target cannot hold in one register into *parts* before it assigns
registers, so gctoy does the same:

* an integer or pointer (up to 8 bytes) is one integer part; ``i128`` is two (low word first);
* a ``half``/``float``/``double`` is one floating-point part;
* a vector is one 16-byte part per 16 bytes (an xmm register each; a shorter vector is widened to
  one), except ``<1 x T>``, which is its element;
* a struct or array is the parts of its fields, in order (IR aggregates are not C structs: each
  field travels on its own).

Arguments: integer parts take rdi, rsi, rdx, rcx, r8, r9; floating-point and vector parts take
xmm0..xmm7; the parts left over go to the stack in order (8 bytes each, 16 and 16-aligned for
a vector part). Results: integer parts in rax, rdx, rcx, r8, the others in xmm0..xmm3; a result
with more parts than that goes to memory the caller provides, its address passed as a hidden
first argument (in rdi) and returned in rax ("sret demotion").
"""

from __future__ import annotations

from dataclasses import dataclass

from ..ir.types import ArrayType, FloatType, IntType, NamedStructType, PointerType, StructType, Type, VectorType
from .frame import ARG_REGISTERS, CodegenError, XMM_ARG_REGISTERS, field_offset, size_of

RESULT_INT = ("rax", "rdx", "rcx", "r8")
RESULT_XMM = ("xmm0", "xmm1", "xmm2", "xmm3")


@dataclass(frozen=True)
class Part:
    """A piece of a value: its byte offset in the value, its size, and its class."""

    offset: int
    size: int
    kind: str  # "int", "float" or "vector"


def parts(ty: Type, base: int = 0) -> list[Part]:
    """The parts a value of ``ty`` is split into at a call boundary, in order."""
    if isinstance(ty, PointerType):
        return [Part(base, 8, "int")]
    if isinstance(ty, IntType):
        if ty.bits <= 64:
            return [Part(base, size_of(ty), "int")]
        return [Part(base + 8 * k, 8, "int") for k in range(size_of(ty) // 8)]
    if isinstance(ty, FloatType):
        return [Part(base, size_of(ty), "float")]
    if isinstance(ty, VectorType):
        if ty.count == 1:
            return parts(ty.element, base)
        total = size_of(ty)
        return [Part(base + k, min(16, total - k), "vector") for k in range(0, total, 16)]
    if isinstance(ty, (StructType, NamedStructType)):
        out: list[Part] = []
        for i, e in enumerate(ty.elements):
            out += parts(e, base + field_offset(ty, i))
        return out
    if isinstance(ty, ArrayType):
        step = size_of(ty.element)
        return [p for k in range(ty.count) for p in parts(ty.element, base + k * step)]
    raise CodegenError(f"values of type {ty} are not supported by the x86-64 code generator")


def assign_arguments(types: list[Type], hidden: bool = False) -> list[list[tuple[Part, str | int]]]:
    """For each argument, its parts with their places: a register name, or a byte offset in the
    outgoing stack area. ``hidden``: rdi carries a hidden result pointer."""
    ints = 1 if hidden else 0
    xmms = stack = 0
    out = []
    for ty in types:
        placed: list[tuple[Part, str | int]] = []
        for p in parts(ty):
            if p.kind == "int" and ints < len(ARG_REGISTERS):
                placed.append((p, ARG_REGISTERS[ints]))
                ints += 1
            elif p.kind != "int" and xmms < XMM_ARG_REGISTERS:
                placed.append((p, f"xmm{xmms}"))
                xmms += 1
            else:
                if p.kind == "vector":
                    stack = (stack + 15) // 16 * 16
                placed.append((p, stack))
                stack += 16 if p.kind == "vector" else 8
        out.append(placed)
    return out


def assign_result(ty: Type) -> list[tuple[Part, str]] | None:
    """The registers a result's parts come back in, or None when it goes to memory (sret demotion)."""
    ps = parts(ty)
    ints = [p for p in ps if p.kind == "int"]
    others = [p for p in ps if p.kind != "int"]
    if len(ints) > len(RESULT_INT) or len(others) > len(RESULT_XMM):
        return None
    regs = iter(RESULT_INT)
    xmms = iter(RESULT_XMM)
    return [(p, next(regs) if p.kind == "int" else next(xmms)) for p in ps]


__all__ = ["Part", "RESULT_INT", "RESULT_XMM", "assign_arguments", "assign_result", "parts"]
