"""Which values are GC pointers, and what they are derived from: the base kinds of LLVM's
SafepointIRVerifier (``getBaseType``), for :mod:`gctoy.passes.verify_safepoints`.

A value whose every source is a constant (``null``, a global, ``undef``) never moves; one derived
from an argument, a load or a call may.  Casts, GEPs, ``freeze``, phis, selects and ``gc.relocate``
are looked through to the values they come from.
"""

from __future__ import annotations

import enum

from ..errors import GCToyError
from ..ir import instructions as I
from ..ir.intrinsics import is_relocate_name
from ..ir.statepoint import GCRelocate, Statepoint, statepoint_unwind_map, token_statepoint
from ..ir.types import GC_ADDRSPACE, ArrayType, NamedStructType, PointerType, StructType, Type, VectorType
from ..ir.values import (
    Constant,
    ConstantAggregate,
    ConstantExpr,
    ConstantInt,
    ConstantNull,
    Function,
    Value,
    ZeroInitializer,
)
# ---------------------------------------------------------------------------
# Which values are GC pointers, and what are they derived from


def holds_gc_pointer(ty: Type) -> bool:
    """True for ``addrspace(1)`` pointers and vectors of them, arrays and structs holding one."""
    if isinstance(ty, PointerType):
        return ty.addrspace == GC_ADDRSPACE
    if isinstance(ty, VectorType):
        return isinstance(ty.element, PointerType) and ty.element.addrspace == GC_ADDRSPACE
    if isinstance(ty, ArrayType):
        return holds_gc_pointer(ty.element)
    if isinstance(ty, (StructType, NamedStructType)):
        return any(holds_gc_pointer(e) for e in ty.elements)
    return False


class BaseKind(enum.Enum):
    """Where a pointer's bases come from, looking through casts, GEPs, phis, selects and relocates."""

    NON_CONSTANT = "non-constant"  # at least one base is a real (movable) object
    EXCLUSIVELY_NULL = "null"  # every base is null: the pointer never moves
    EXCLUSIVELY_SOME_CONSTANT = "constant"  # every base is a constant, some not null


def is_null_constant(v: Value) -> bool:
    """True for the all-zero constant of its type (``null``, ``zeroinitializer``, folded casts of them)."""
    if isinstance(v, (ConstantNull, ZeroInitializer)):
        return True
    if isinstance(v, ConstantAggregate):
        return bool(v.elements) and all(is_null_constant(e) for e in v.elements)
    if isinstance(v, ConstantExpr) and v.operands:
        # The constant folder turns these into plain null when the IR is read.
        if v.opcode == "bitcast":
            return is_null_constant(v.operands[0])
        if v.opcode == "getelementptr":
            return is_null_constant(v.operands[0]) and all(_is_zero_index(i) for i in v.operands[1:])
    return False


def _is_zero_index(v: Value) -> bool:
    return (isinstance(v, ConstantInt) and v.value == 0) or isinstance(v, ZeroInitializer)


def _strip_pointer_casts(v: Value) -> Value:
    """Follow bitcasts, address-space casts, all-zero GEPs and ``returned`` arguments.

    A non-pointer value (an integer, a vector of pointers) comes back unchanged,
    as does the operand of a bitcast from a non-pointer.
    """
    if not isinstance(v.type, PointerType):
        return v
    seen = {id(v)}
    while True:
        if isinstance(v, I.GetElementPtr) or (isinstance(v, ConstantExpr) and v.opcode == "getelementptr"):
            ops = v.operands if isinstance(v, I.GetElementPtr) else list(v.operands)
            if not all(_is_zero_index(i) for i in ops[1:]):
                return v
            v = ops[0]
        elif _opcode(v) == "bitcast":
            v = _first_operand(v)
            if not isinstance(v.type, PointerType):
                return v
        elif _opcode(v) == "addrspacecast":
            v = _first_operand(v)
        elif isinstance(v, I.CallBase) and (returned := _returned_argument(v)) is not None:
            v = returned
        else:
            return v
        if id(v) in seen:
            return v
        seen.add(id(v))


def _opcode(v: Value) -> str | None:
    if isinstance(v, I.Cast):
        return v.opcode
    if isinstance(v, ConstantExpr):
        return v.opcode
    return None


def _first_operand(v: Value) -> Value:
    return v.value if isinstance(v, I.Cast) else v.operands[0]  # type: ignore[attr-defined]


def _returned_argument(call: I.CallBase) -> Value | None:
    for arg, attrs in zip(call.args, call.arg_attrs):
        if any(a.kind == "returned" for a in attrs):
            return arg
    return None


def _base_sources(v: Value, unwinds: dict | None = None, seen: dict | None = None) -> list[Value] | None:
    """What ``v`` is derived from, for the base walk (None: ``v`` is a source itself).

    A ``freeze`` and a ``gc.relocate`` are looked through (to the frozen value, to the pointer it
    relocates): neither makes a null pointer non-null or a constant movable.  (LLVM 14 counted each
    as a movable source of its own; LLVM 19 looks through both, and so does gctoy.)
    """
    if isinstance(v, I.Cast):
        return [_strip_pointer_casts(v)]
    if isinstance(v, I.GetElementPtr):
        return [v.pointer]
    if isinstance(v, I.Freeze):
        return [v.value]
    if isinstance(v, I.Phi):
        return [val for val, _ in v.incoming]
    if isinstance(v, I.Select):
        return [v.true_value, v.false_value]
    relocated = _relocated_pointer(v, unwinds, seen)
    return None if relocated is None else [relocated]


def _source_kind(v: Value) -> BaseKind:
    """The kind of a value the base walk stops at."""
    if not isinstance(v, Constant):
        return BaseKind.NON_CONSTANT
    return BaseKind.EXCLUSIVELY_NULL if is_null_constant(v) else BaseKind.EXCLUSIVELY_SOME_CONSTANT


def base_kind(value: Value) -> BaseKind:
    """Classify ``value`` by the sources it may be derived from (LLVM's ``getBaseType``)."""
    work: list[Value] = [value]
    seen: set[int] = set()
    only_null = True
    while work:
        v = work.pop()
        if id(v) in seen:
            continue
        seen.add(id(v))
        sources = _base_sources(v)
        if sources is not None:
            work += sources
            continue
        kind = _source_kind(v)
        if kind is BaseKind.NON_CONSTANT:
            return kind
        only_null = only_null and kind is BaseKind.EXCLUSIVELY_NULL
    return BaseKind.EXCLUSIVELY_NULL if only_null else BaseKind.EXCLUSIVELY_SOME_CONSTANT


_RANK = {BaseKind.EXCLUSIVELY_NULL: 0, BaseKind.EXCLUSIVELY_SOME_CONSTANT: 1, BaseKind.NON_CONSTANT: 2}


class BaseKinds:
    """:func:`base_kind` of every value of one function, found together (one walk per value is quadratic).

    A derived value's kind is the highest of its sources' (null < some constant < non-constant),
    found by raising kinds from the bottom until nothing changes, as a walk would find it.
    """

    def __init__(self, fn: Function) -> None:
        self.sources: dict[int, list[Value]] = {}
        users: dict[int, list[I.Instruction]] = {}
        unwinds = statepoint_unwind_map(fn)
        seen: dict[int, Statepoint] = {}
        for inst in fn.instructions():
            srcs = _base_sources(inst, unwinds, seen)
            if srcs is not None:
                self.sources[id(inst)] = srcs
                for s in srcs:
                    users.setdefault(id(s), []).append(inst)
        # each derived value starts from its direct sources that are not derived, then a raise
        # travels to the users (a kind only goes up, at most twice, so this is linear)
        self.kinds = {
            k: max(
                (_source_kind(s) for s in srcs if id(s) not in self.sources),
                key=_RANK.__getitem__,
                default=BaseKind.EXCLUSIVELY_NULL,
            )
            for k, srcs in self.sources.items()
        }
        work = [i for i in fn.instructions() if id(i) in self.sources]
        while work:
            v = work.pop()
            kind = self.kinds[id(v)]
            for u in users.get(id(v), ()):
                if u is not v and _RANK[kind] > _RANK[self.kinds[id(u)]]:
                    self.kinds[id(u)] = kind
                    work.append(u)

    def __call__(self, v: Value) -> BaseKind:
        """The kind of ``v`` (a value of this function, or any other value)."""
        k = self.kinds.get(id(v))
        return k if k is not None else (base_kind(v) if _base_sources(v) is not None else _source_kind(v))

    def may_move(self, v: Value) -> bool:
        """True if some base of ``v`` is a real object."""
        return self(v) is BaseKind.NON_CONSTANT


def _relocated_pointer(v: Value, unwinds: dict | None = None, seen: dict | None = None) -> Value | None:
    """For a well-formed ``gc.relocate``: the derived pointer it relocates; else None.

    ``unwinds`` (``statepoint_unwind_map``) and ``seen`` (call id -> Statepoint) save work per call."""
    if not (isinstance(v, I.Call) and is_relocate_name(v.callee_name) and len(v.args) == 3):
        return None
    sp = token_statepoint(v.args[0], unwinds)
    if sp is None:
        return None
    try:
        view = seen.get(id(sp)) if seen is not None else None
        if view is None:
            view = Statepoint.of(sp)
            if seen is not None:
                seen[id(sp)] = view
        return GCRelocate(v, view).derived
    except (GCToyError, IndexError):
        return None


def may_move(value: Value) -> bool:
    """True if some base of ``value`` is a real object (so a statepoint may relocate it)."""
    return base_kind(value) is BaseKind.NON_CONSTANT
