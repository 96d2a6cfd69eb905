"""Base pointer inference, as RewriteStatepointsForGC does it.

Every GC pointer the collector must relocate is reported together with the
*base* of the object it points into: the collector moves objects, and a
pointer into the middle of one (a *derived* pointer) is relocated as
``new base + (derived - old base)``.

The *base defining value* (BDV) of a pointer is found by walking back through
address arithmetic::

    %d = getelementptr i8, i8 addrspace(1)* %b, i64 16    BDV(%d) = BDV(%b)
    %c = bitcast i8 addrspace(1)* %d to i64 addrspace(1)*  BDV(%c) = BDV(%d)
    %b = load / call / argument / inttoptr                 BDV(%b) = %b, a known base
    null, undef, globals, constant expressions             base = null

A phi or select is its own BDV but not necessarily a base: ``phi [%a + 8,
%l], [%b + 16, %r]`` points into ``%a``'s object on one path and ``%b``'s on
the other.  For those, a small lattice is solved over every phi/select
reachable through BDVs (Unknown -> Base(v) -> Conflict); a node that can only
ever be based on one value ``v`` gets base ``v``, and a node in conflict gets
a new *base phi* (or select) beside it that merges the bases of its inputs::

    %p.base = phi i8 addrspace(1)* [ %a, %l ], [ %b, %r ], !is_base_value !0
    %p      = phi i8 addrspace(1)* [ %a1, %l ], [ %b1, %r ]
"""

from __future__ import annotations

from typing import Callable

from ..ir import instructions as I
from ..ir.types import PointerType, VectorType
from ..ir.values import Argument, Constant, ConstantInt, ConstantNull, Function, Value, ZeroInitializer
from .base_vectors import (
    VECTOR_BDV_NODES,
    base_ee_for,
    base_name_for,
    bdv_inputs,
    fill_vector_base,
    forced_conflict,
    vector_base_placeholder,
    vector_bdv,
)
from .naming import NameUniquer

IS_BASE_VALUE = "is_base_value"


def strip_pointer_casts(v: Value) -> Value:
    """Look through pointer bitcasts, address space casts, all-zero GEPs and calls that return an
    argument marked ``returned`` (LLVM's stripPointerCasts)."""
    if not isinstance(v.type, PointerType):
        return v  # vectors of pointers are not stripped
    seen: set[int] = set()
    while id(v) not in seen:
        seen.add(id(v))
        if isinstance(v, I.Cast) and v.opcode in ("bitcast", "addrspacecast") and isinstance(v.type, PointerType):
            v = v.value
        elif isinstance(v, I.GetElementPtr) and all(isinstance(i, ConstantInt) and i.value == 0 for i in v.indices):
            v = v.pointer
        elif isinstance(v, I.CallBase) and (arg := returned_argument(v)) is not None:
            v = arg
        else:
            return v
    return v  # a cycle (only in unreachable code)


def returned_argument(call: I.CallBase) -> Value | None:
    """The argument ``call`` returns: the one marked ``returned`` at the call or on the callee's
    parameter (LLVM's getReturnedArgOperand)."""
    callee = call.callee if isinstance(call.callee, Function) else None
    for k, arg in enumerate(call.args):
        attrs = list(call.arg_attrs[k]) if k < len(call.arg_attrs) else []
        if callee is not None and k < len(callee.args):
            attrs += callee.args[k].attrs
        if any(a.kind == "returned" for a in attrs):
            return arg
    return None


def base_defining_value(v: Value, through_freeze: bool = False) -> tuple[Value, bool]:
    """``(bdv, known)``: the BDV of ``v`` and whether it is known to be a base.

    A ``freeze`` is a base of its own in LLVM 14; from LLVM 15 on (``through_freeze``) its BDV is its
    operand's, as for a bitcast."""
    if isinstance(v.type, VectorType):
        return vector_bdv(v, lambda scalar: base_defining_value(scalar, through_freeze), through_freeze)
    while True:
        if isinstance(v, I.Freeze) and through_freeze:
            v = v.value
            continue
        if isinstance(v, Argument):
            return v, True
        if isinstance(v, Constant):
            return ConstantNull(v.type) if isinstance(v.type, PointerType) else v, True
        if isinstance(v, I.Cast):
            if v.opcode == "inttoptr":
                return v, True
            if v.opcode in ("bitcast", "addrspacecast"):
                v = v.value
                continue
            return v, True
        if isinstance(v, I.GetElementPtr):
            v = v.pointer
            continue
        if isinstance(v, I.Instruction) and any(k == IS_BASE_VALUE for k, _ in v.metadata):
            return v, True
        if isinstance(v, (I.Phi, I.Select, I.ExtractElement)):
            return v, False
        return v, True


def _inputs(node: Value) -> list[Value]:
    if isinstance(node, I.Phi):
        return [v for v, _ in node.incoming]
    if isinstance(node, VECTOR_BDV_NODES):
        return bdv_inputs(node)
    assert isinstance(node, I.Select)
    return [node.true_value, node.false_value]


class BaseFinder:
    """Finds (and, where needed, inserts) the base of every GC pointer of one function."""

    _UNKNOWN, _BASE, _CONFLICT = 0, 1, 2

    def __init__(
        self,
        names: NameUniquer,
        metadata_ref: "Callable[[], str]",
        prune_self_inputs: bool | None = None,
        llvm: int = 14,
    ):
        self.names = names
        #: the LLVM release whose rules to follow where 14 and later releases differ
        self.llvm = llvm
        #: LLVM 15 and later: a scalar ``freeze`` has the BDV of its operand (LLVM 14: it is a base)
        self.through_freeze = llvm >= 15
        #: LLVM 19 (``llvm=15`` and up; releases 15 to 18 not checked): a phi whose inputs are bases
        #: *or the phi itself* is its own base (LLVM 14 keeps such a loop phi in the lattice, where it
        #: takes the base of its other inputs)
        self.prune_self_inputs = llvm >= 15 if prune_self_inputs is None else prune_self_inputs
        self.metadata_ref = metadata_ref
        #: id(value) -> its base (for BDVs resolved by the lattice, and everything asked)
        self.cache: dict[int, Value] = {}
        #: base instructions this finder inserted, in order
        self.inserted: list[I.Instruction] = []

    def base_or_bdv(self, v: Value) -> Value:
        """The cached base of ``v``'s BDV if known, else its BDV."""
        bdv, known = base_defining_value(v, self.through_freeze)
        if known:
            return bdv
        return self.cache.get(id(bdv), bdv)

    def find_base(self, v: Value) -> Value:
        """The base of ``v``, solving the phi/select lattice when needed."""
        bdv, known = base_defining_value(v, self.through_freeze)
        if known:
            return bdv
        if id(bdv) in self.cache:
            return self.cache[id(bdv)]
        self._solve(bdv)
        return self.cache[id(bdv)]

    # -- the lattice ---------------------------------------------------------------
    def _solve(self, root: Value) -> None:
        # 1. every phi/select reachable through BDVs whose base is not known yet
        states: dict[int, Value] = {}
        order: list[Value] = []
        work = [root]
        while work:
            node = work.pop()
            if id(node) in states:
                continue
            states[id(node)] = node
            order.append(node)
            for inp in _inputs(node):
                b = self.base_or_bdv(inp)
                _, known = base_defining_value(b, self.through_freeze)
                if not known and id(b) not in self.cache and id(b) not in states:
                    work.append(b)
        # 2. prune nodes whose inputs all are (casts of) values that are their own base
        changed = True
        while changed:
            changed = False
            for node in list(order):
                if all(self._prunable(inp, states, node) for inp in _inputs(node)):
                    del states[id(node)]
                    order.remove(node)
                    self.cache[id(node)] = node
                    changed = True
        if not order:
            return
        # 3. optimistic fixpoint: Unknown -> Base(v) -> Conflict
        state: dict[int, tuple[int, Value | None]] = {id(n): (self._UNKNOWN, None) for n in order}
        changed = True
        while changed:
            changed = False
            for node in order:
                new: tuple[int, Value | None] = (self._UNKNOWN, None)
                for inp in _inputs(node):
                    new = self._meet(new, self._input_state(inp, states, state))
                if new != state[id(node)]:
                    state[id(node)] = new
                    changed = True
        # 3b. vectors: a lane of a base vector, or a base of the wrong shape (vector or scalar)
        for node in order:
            kind, value = state[id(node)]
            if kind != self._BASE:
                continue
            assert value is not None, "a node in state Base has its base"
            if forced_conflict(node, value, self.llvm):
                state[id(node)] = (self._CONFLICT, None)
            elif isinstance(value.type, VectorType) and not isinstance(node.type, VectorType):
                state[id(node)] = (
                    (self._BASE, base_ee_for(node, value, self.names, self.metadata_ref()))
                    if isinstance(node, I.ExtractElement)
                    else (self._CONFLICT, None)
                )
        # 4. a base instruction beside each node in conflict; the others take their base
        for node in order:
            kind, value = state[id(node)]
            if kind == self._CONFLICT:
                self.cache[id(node)] = self._insert_base(node)
            else:
                assert kind == self._BASE and value is not None, "a reachable phi/select cannot stay Unknown"
                self.cache[id(node)] = value
        for node in order:
            if state[id(node)][0] == self._CONFLICT:
                self._fill_base(node, states)

    def _prunable(self, inp: Value, states: dict[int, Value], node: Value) -> bool:
        if self.prune_self_inputs and strip_pointer_casts(inp) is node:
            return True
        b = self.base_or_bdv(inp)
        s = strip_pointer_casts(inp)
        # LLVM's constants are unique per type: a null (or zeroinitializer) input *is* its own base
        return (s is b or (isinstance(s, (ConstantNull, ZeroInitializer)) and s == b)) and id(b) not in states

    def _input_state(self, inp: Value, states, state) -> tuple[int, Value | None]:
        b = self.base_or_bdv(inp)
        if id(b) in states:
            return state[id(b)]
        return (self._BASE, b)

    def _meet(self, a: tuple[int, Value | None], b: tuple[int, Value | None]) -> tuple[int, Value | None]:
        if a[0] == self._CONFLICT or b[0] == self._CONFLICT:
            return (self._CONFLICT, None)
        if a[0] == self._UNKNOWN:
            return b
        if b[0] == self._UNKNOWN:
            return a
        return a if _same(a[1], b[1]) else (self._CONFLICT, None)

    def _insert_base(self, node: Value) -> I.Instruction:
        name = base_name_for(node)
        if isinstance(node, I.Phi):
            base: I.Instruction = I.Phi(node.type, [])
        elif isinstance(node, VECTOR_BDV_NODES):
            base = vector_base_placeholder(node)
        else:
            assert isinstance(node, I.Select), "a base defining node is a phi, a vector node or a select"
            base = I.Select(node.condition, node.true_value, node.false_value)
        base.name = self.names.unique(name)
        base.metadata.append((IS_BASE_VALUE, self.metadata_ref()))
        node.parent.insert_before(node, base)
        self.inserted.append(base)
        return base

    def _fill_base(self, node: Value, states: dict[int, Value]) -> None:
        base = self.cache[id(node)]
        if isinstance(node, I.Phi):
            assert isinstance(base, I.Phi)
            chosen: dict[int, Value] = {}
            for inp, block in node.incoming:
                if id(block) not in chosen:
                    chosen[id(block)] = self._cast_to(self._base_for_input(inp), node.type, block.terminator)
                base.add_incoming(chosen[id(block)], block)
        elif isinstance(node, VECTOR_BDV_NODES):
            assert isinstance(base, I.SimpleInstruction)
            fill_vector_base(
                node, base, lambda inp, at: self._cast_to(self._base_for_input(inp), inp.type, at), self.llvm
            )
        else:
            assert isinstance(node, I.Select) and isinstance(base, I.Select)
            t = self._cast_to(self._base_for_input(node.true_value), node.type, base)
            f = self._cast_to(self._base_for_input(node.false_value), node.type, base)
            base.ops[1], base.ops[2] = t, f

    def _base_for_input(self, inp: Value) -> Value:
        b = self.base_or_bdv(inp)
        return self.cache.get(id(b), b)

    def _cast_to(self, v: Value, ty, before: I.Instruction) -> Value:
        if v.type == ty:
            return v
        if isinstance(v, Constant):
            if isinstance(v, ZeroInitializer):
                return ZeroInitializer(ty)
            return ConstantNull(ty) if isinstance(v, ConstantNull) else v
        cast = I.Cast("bitcast", v, ty, name=self.names.unique("cast"))
        before.parent.insert_before(before, cast)
        return cast


def _same(a: Value | None, b: Value | None) -> bool:
    if a is b:
        return True
    if isinstance(a, ZeroInitializer) or isinstance(b, ZeroInitializer):
        return a == b  # LLVM's zeroinitializer is one value per type
    return isinstance(a, ConstantNull) and isinstance(b, ConstantNull)
