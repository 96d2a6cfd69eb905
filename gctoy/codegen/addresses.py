"""Integer widths and wrapping, and the addresses of constant expressions, for the x86-64 lowering."""

from __future__ import annotations

from ..ir.types import ArrayType, FloatType, NamedStructType, StructType, Type
from ..ir.values import ConstantExpr, ConstantInt, Function, GlobalVariable, Value
from .floats import float_width
from .frame import CodegenError, field_offset, size_of, value_width
from .records import strip_casts


def width(ty: Type) -> int:
    """Bits of an integer, pointer or floating-point value."""
    if isinstance(ty, FloatType):
        return float_width(ty)
    return value_width(ty, 64, "x86-64")


def unsigned(value: int, bits: int) -> int:
    """``value`` wrapped to ``bits`` bits, read as unsigned."""
    return value & ((1 << bits) - 1)


def signed(value: int, bits: int) -> int:
    """``value`` wrapped to ``bits`` bits, read as two's complement."""
    value = unsigned(value, bits)
    return value - (1 << bits) if value >> (bits - 1) else value


def constant_address(c: Value) -> tuple[GlobalVariable | Function, int]:
    """A global plus a byte offset for ``@g``, a pointer cast of it, or a constant-index GEP into it
    (``getelementptr inbounds (%gc_map.1, %gc_map.1* @__gc_f, i32 0, i32 0)`` is ``@__gc_f + 0``)."""
    c = strip_casts(c)
    if isinstance(c, (GlobalVariable, Function)):
        return c, 0
    if not (isinstance(c, ConstantExpr) and c.opcode == "getelementptr" and c.source_type is not None):
        raise CodegenError(f"constant {c!r} is not the address of a global")
    base, offset = constant_address(c.operands[0])
    ty: Type = c.source_type
    for n, idx in enumerate(c.operands[1:]):
        if not isinstance(idx, ConstantInt):
            raise CodegenError("a constant getelementptr needs constant indices")
        k = signed(idx.value, width(idx.type))
        if n == 0:
            offset += k * size_of(ty)
        elif isinstance(ty, (StructType, NamedStructType)):
            offset += field_offset(ty, k)
            ty = ty.elements[k]
        elif isinstance(ty, ArrayType):
            ty = ty.element
            offset += k * size_of(ty)
        else:
            raise CodegenError(f"getelementptr cannot index into {ty}")
    return base, offset


__all__ = ["constant_address", "signed", "unsigned", "width"]
