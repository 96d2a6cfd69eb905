"""Parsing ``atomicrmw``.

The function takes the module parser (``p``) as its first argument; the instruction parser's
opcode table points at it.
"""

from __future__ import annotations

from .instructions import AtomicRMW
from .layout import data_layout
from .types import FloatType, IntType, PointerType

#: the operations of ``atomicrmw`` (LLVM 19)
RMW_OPERATIONS = frozenset(
    {
        "xchg", "add", "sub", "and", "nand", "or", "xor", "max", "min", "umax", "umin",
        "fadd", "fsub", "fmax", "fmin", "uinc_wrap", "udec_wrap",
    }
)  # fmt: skip
_FLOAT_OPERATIONS = frozenset({"fadd", "fsub", "fmax", "fmin"})
#: the orderings an ``atomicrmw`` may have
RMW_ORDERINGS = frozenset({"monotonic", "acquire", "release", "acq_rel", "seq_cst"})


def inst_atomicrmw(p) -> AtomicRMW:
    """``atomicrmw [volatile] OP ptr P, T V [syncscope("S")] ORDERING[, align A]``."""
    p.next()
    volatile = p.accept("volatile")
    op_tok = p.peek()
    if op_tok[1] not in RMW_OPERATIONS:
        raise p.err("expected binary operation in atomicrmw")
    operation = p.next()[1]
    ptr_tok = p.peek()
    pointer = p.pointer_operand()
    p.expect(",")
    val_tok = p.peek()
    value = p.typed_value()
    pty = pointer.type
    assert isinstance(pty, PointerType)  # checked by pointer_operand
    if pty.pointee is not None and pty.pointee != value.type:
        raise p.err("atomicrmw value and pointer type do not match", ptr_tok[2])
    _check_operand(p, operation, value.type, val_tok[2])
    scope = p.syncscope()
    ordering = p.peek()[1]
    if ordering == "unordered":
        raise p.err("atomicrmw cannot be unordered")
    if ordering not in RMW_ORDERINGS:
        raise p.err("Expected ordering on atomic instruction")
    p.next()
    if p.at(",") and p.peek(1)[1] == "align":
        p.skip(2)
        align = p.alignment()
    else:  # LLVM's default: the value's store size
        align = (data_layout(p.module.header.datalayout).size_bits(value.type) + 7) // 8
    return AtomicRMW(operation, pointer, value, ordering, align, volatile=volatile, syncscope=scope)


def _check_operand(p, operation: str, ty, offset: int) -> None:
    if operation == "xchg":
        if not isinstance(ty, (IntType, FloatType, PointerType)):
            raise p.err("atomicrmw xchg operand must be an integer, floating point, or pointer type", offset)
    elif operation in _FLOAT_OPERATIONS:
        if not isinstance(ty, FloatType):
            raise p.err(f"atomicrmw {operation} operand must be a floating point type", offset)
    elif not isinstance(ty, IntType):
        raise p.err(f"atomicrmw {operation} operand must be an integer", offset)
