"""Parsing ``extractelement``, ``insertelement``, ``shufflevector`` and the operands of a vector GEP.

The functions take the module parser (``p``) as their first argument; the
instruction parser's opcode table points at them.
"""

from __future__ import annotations

from .types import IntType, PointerType, Type, VectorType
from .values import Value
from .vector_instructions import ExtractElement, InsertElement, ShuffleVector, is_valid_mask


def _vector_operand(p, what: str) -> Value:
    tok = p.peek()
    v = p.typed_value()
    if not isinstance(v.type, VectorType):
        raise p.err(f"{what} requires a vector operand, not '{v.type}'", tok[2])
    return v


def _index_operand(p, what: str) -> Value:
    tok = p.peek()
    v = p.typed_value()
    if not isinstance(v.type, IntType):
        raise p.err(f"{what} index must be an integer, not '{v.type}'", tok[2])
    return v


def inst_extractelement(p) -> ExtractElement:
    """``extractelement <N x T> %v, iK %idx``."""
    p.next()
    vec = _vector_operand(p, "extractelement")
    p.expect(",")
    return ExtractElement(vec, _index_operand(p, "extractelement"))


def inst_insertelement(p) -> InsertElement:
    """``insertelement <N x T> %v, T %x, iK %idx``."""
    p.next()
    vec = _vector_operand(p, "insertelement")
    p.expect(",")
    tok = p.peek()
    elt = p.typed_value()
    assert isinstance(vec.type, VectorType)  # checked by _vector_operand
    if elt.type != vec.type.element:
        raise p.err(
            f"insertelement element of type '{elt.type}' does not match the vector's element type '{vec.type.element}'",
            tok[2],
        )
    p.expect(",")
    return InsertElement(vec, elt, _index_operand(p, "insertelement"))


def inst_shufflevector(p) -> ShuffleVector:
    """``shufflevector <N x T> %a, <N x T> %b, <M x i32> mask``."""
    p.next()
    a = _vector_operand(p, "shufflevector")
    p.expect(",")
    tok = p.peek()
    b = p.typed_value()
    if b.type != a.type:
        raise p.err("shufflevector operands must have the same type", tok[2])
    p.expect(",")
    tok = p.peek()
    mask_ty = p.type_()
    p.split_pointer_type()
    if p.peek()[0] == "LOCAL":
        raise p.err("shufflevector mask must be a constant", tok[2])
    mask = p.constant(mask_ty)
    assert isinstance(a.type, VectorType)  # checked by _vector_operand
    if not is_valid_mask(mask, a.type.count):
        raise p.err(
            f"invalid shufflevector mask of type '{mask_ty}' (a constant vector of i32 lanes below "
            f"{2 * a.type.count}, undef or poison)",
            tok[2],
        )
    return ShuffleVector(a, b, mask)


def gep_pointer_type(ty: Type) -> PointerType | None:
    """The pointer type a GEP's base operand has: itself, or the lanes' type for a vector base."""
    if isinstance(ty, VectorType):
        ty = ty.element
    return ty if isinstance(ty, PointerType) else None
