"""Parsing ``atomicrmw``, ``cmpxchg``, ``fence`` and the tail of ``store atomic``.

The function takes the module parser (``p``) as its first argument; the instruction parser's
opcode table points at it.
"""

from __future__ import annotations

from .instructions import AtomicRMW, CmpXchg, Fence, Store
from .layout import data_layout
from .types import FloatType, IntType, PointerType, Type
from .values import Value

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
#: every ordering LLVM spells
ORDERINGS = frozenset({"unordered", "monotonic", "acquire", "release", "acq_rel", "seq_cst"})


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
    return AtomicRMW(operation, pointer, value, ordering, _align(p, value.type), volatile=volatile, syncscope=scope)


def _align(p, ty: Type) -> int:
    """``, align A``; without it LLVM's default for atomicrmw and cmpxchg, the value's store size."""
    if p.at(",") and p.peek(1)[1] == "align":
        p.skip(2)
        return p.alignment()
    return (data_layout(p.module.header.datalayout).size_bits(ty) + 7) // 8


def _ordering(p) -> tuple[str, int]:
    """An ordering keyword and where it stands."""
    tok = p.peek()
    if tok[1] not in ORDERINGS:
        raise p.err("Expected ordering on atomic instruction")
    p.next()
    return tok[1], tok[2]


def _check_size(p, ty: Type, offset: int) -> None:
    """The verifier's rule for an atomic access: a power-of-two number of whole bytes."""
    bits = data_layout(p.module.header.datalayout).size_bits(ty)
    if bits < 8:
        raise p.err("atomic memory access' size must be byte-sized", offset)
    if bits & (bits - 1):
        raise p.err("atomic memory access' operand must have a power-of-two size", offset)


def atomic_store(p, value: Value, pointer: Value, volatile: bool, offset: int) -> Store:
    """The rest of ``store atomic [volatile] T V, ptr P [syncscope("S")] ORDERING, align A``."""
    scope = p.syncscope()
    ordering, _ = _ordering(p)
    if not (p.at(",") and p.peek(1)[1] == "align"):
        raise p.err("atomic store must have explicit non-zero alignment", offset)
    p.skip(2)
    align = p.alignment()
    if ordering in ("acquire", "acq_rel"):  # LLVM names both "Acquire" here
        raise p.err("atomic store cannot use Acquire ordering", offset)
    if not isinstance(value.type, (IntType, FloatType, PointerType)):
        raise p.err("atomic store operand must have integer, pointer, or floating point type", offset)
    _check_size(p, value.type, offset)
    return Store(value, pointer, align, volatile, ordering=ordering, syncscope=scope)


def inst_cmpxchg(p) -> CmpXchg:
    """``cmpxchg [weak] [volatile] ptr P, T C, T N [syncscope("S")] SUCCESS FAILURE[, align A]``."""
    p.next()
    weak = p.accept("weak")
    volatile = p.accept("volatile")
    ptr_tok = p.peek()
    pointer = p.typed_value()
    if not isinstance(pointer.type, PointerType):
        raise p.err("cmpxchg operand must be a pointer", ptr_tok[2])
    p.expect(",")
    cmp_tok = p.peek()
    compare = p.typed_value()
    p.expect(",")
    new_tok = p.peek()
    new = p.typed_value()
    pointee = pointer.type.pointee
    if pointee is not None and pointee != compare.type:
        raise p.err("compare value and pointer type do not match", cmp_tok[2])
    if pointee is not None and pointee != new.type:
        raise p.err("new value and pointer type do not match", new_tok[2])
    if compare.type != new.type:
        raise p.err("compare value and new value type do not match", new_tok[2])
    scope = p.syncscope()
    success, success_at = _ordering(p)
    failure, failure_at = _ordering(p)
    if success == "unordered":
        raise p.err("invalid cmpxchg success ordering", success_at)
    if failure in ("unordered", "release", "acq_rel"):
        raise p.err("invalid cmpxchg failure ordering", failure_at)
    if not isinstance(compare.type, (IntType, PointerType)):
        raise p.err("cmpxchg operand must have integer or pointer type", cmp_tok[2])
    _check_size(p, compare.type, cmp_tok[2])
    align = _align(p, compare.type)
    return CmpXchg(pointer, compare, new, success, failure, align, weak=weak, volatile=volatile, syncscope=scope)


def inst_fence(p) -> Fence:
    """``fence [syncscope("S")] ORDERING``."""
    p.next()
    scope = p.syncscope()
    ordering, at = _ordering(p)
    if ordering in ("unordered", "monotonic"):
        raise p.err(f"fence cannot be {ordering}", at)
    return Fence(ordering, syncscope=scope)


def _check_operand(p, operation: str, ty, offset: int) -> None:
    if operation == "xchg":
        if not isinstance(ty, (IntType, FloatType, PointerType)):
            raise p.err("atomicrmw xchg operand must be an integer, floating point, or pointer type", offset)
    elif operation in _FLOAT_OPERATIONS:
        if not isinstance(ty, FloatType):
            raise p.err(f"atomicrmw {operation} operand must be a floating point type", offset)
    elif not isinstance(ty, IntType):
        raise p.err(f"atomicrmw {operation} operand must be an integer", offset)
