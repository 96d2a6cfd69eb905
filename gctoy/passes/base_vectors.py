"""Vectors of GC pointers in RewriteStatepointsForGC: their bases, their lanes' bases, their relocation.

A ``<2 x i8 addrspace(1)*>`` value is one live value like any pointer: it goes
into ``gc-live`` whole and comes back from a vector ``gc.relocate``
(``.v2p1i8`` in LLVM 14's typed naming, ``.v2p1`` with opaque pointers).  Its
base is a *base vector*: lane ``i`` of the base is the base of lane ``i``.

Base defining values (BDVs) of vectors, as LLVM finds them::

    argument, load, call, constant (-> zeroinitializer)    a known base vector
    vector GEP, bitcast                                    the BDV of its pointer operand
    insertelement, shufflevector, phi, select              a BDV whose base must be computed

and an ``extractelement`` is the BDV of a scalar.  These nodes join phis and
selects in the base lattice; a node in conflict gets a parallel instruction
that computes its base from its inputs' bases::

    %v.base = insertelement <2 x T> zeroinitializer, T %obj, i32 0, !is_base_value !0
    %v      = insertelement <2 x T> undef, T %gep, i32 0
    %e.base = extractelement <2 x T> %v.base, i64 %i, !is_base_value !0   (LLVM 14: %base_ee)
    %e      = extractelement <2 x T> %v, i64 %i

LLVM 14 and LLVM 19 differ after the lattice is solved: LLVM 14 gives an
``extractelement`` whose input has a base vector a new ``base_ee`` and turns
a scalar node with a vector base into a conflict; LLVM 19 makes every
insert/extract/shuffle node a conflict, and any node whose base is not of its
own shape (vector or scalar) too.
"""

from __future__ import annotations

from typing import Callable, TypeGuard

from ..ir import instructions as I
from ..ir.types import GC_ADDRSPACE, I8, I32, I64, PointerType, Type, VectorType, is_gc_pointer
from ..ir.values import Argument, Constant, ConstantInt, Poison, Undef, Value, ZeroInitializer
from .naming import NameUniquer

#: the instructions that carry the base of a vector lane by lane
VECTOR_BDV_NODES = (I.ExtractElement, I.InsertElement, I.ShuffleVector)


def is_gc_vector(ty: Type) -> bool:
    """True for a vector of GC pointers (``<N x T addrspace(1)*>``)."""
    return isinstance(ty, VectorType) and is_gc_pointer(ty.element)


def is_handled_gc_type(ty: Type) -> bool:
    """What RS4GC tracks: a GC pointer or a vector of them (LLVM's ``isHandledGCPointerType``)."""
    return is_gc_pointer(ty) or is_gc_vector(ty)


def same_shape(a: Value, b: Value) -> bool:
    """Both vectors or both scalars (LLVM's ``areBothVectorOrScalar``)."""
    return isinstance(a.type, VectorType) == isinstance(b.type, VectorType)


def vector_bdv(
    v: Value, scalar_bdv: Callable[[Value], tuple[Value, bool]], through_freeze: bool = False
) -> tuple[Value, bool]:
    """``(bdv, known)`` of a vector of pointers (``scalar_bdv`` handles a GEP's scalar base).

    A ``freeze`` is a base vector of its own in LLVM 14; from LLVM 15 on (``through_freeze``) it is
    looked through, as for a scalar."""
    while True:
        if through_freeze and isinstance(v, I.Freeze):
            v = v.value
            continue
        if isinstance(v, I.Instruction) and any(k == "is_base_value" for k, _ in v.metadata):
            return v, True
        if isinstance(v, Argument):
            return v, True
        if isinstance(v, Constant):
            return ZeroInitializer(v.type), True
        if isinstance(v, (I.InsertElement, I.ShuffleVector, I.Phi, I.Select)):
            return v, False
        if isinstance(v, I.GetElementPtr):
            v = v.pointer
            if not isinstance(v.type, VectorType):
                return scalar_bdv(v)
            continue
        if isinstance(v, I.Cast) and v.opcode == "bitcast":
            v = v.value
            continue
        return v, True  # load, call, invoke and anything else: a base vector


def bdv_inputs(node: Value) -> list[Value]:
    """The inputs of an insert/extract/shuffle BDV whose bases decide the node's base."""
    if isinstance(node, I.ExtractElement):
        return [node.vector]
    if isinstance(node, I.InsertElement):
        return [node.vector, node.element]
    assert isinstance(node, I.ShuffleVector)
    # a broadcast reads one lane of its first operand: the second does not matter
    return [node.ops[0]] if node.is_zero_splat() else [node.ops[0], node.ops[1]]


def forced_conflict(node: Value, base: Value, llvm: int) -> bool:
    """LLVM 19: after the lattice, a node whose base cannot be its own kind of value is a conflict."""
    if llvm < 15:
        return False
    return isinstance(node, VECTOR_BDV_NODES) or not same_shape(node, base)


def base_ee_for(node: I.ExtractElement, base_vector: Value, names: NameUniquer, metadata: str) -> I.Instruction:
    """LLVM 14: the lane of a known base vector, ``%base_ee = extractelement %base, %idx``."""
    ee = I.ExtractElement(base_vector, node.index, name=names.unique("base_ee"))
    ee.metadata.append(("is_base_value", metadata))
    node.parent.insert_before(node, ee)
    return ee


def vector_base_placeholder(node: Value) -> I.SimpleInstruction:
    """A copy of an insert/extract/shuffle whose value operands are filled in later with bases."""
    if isinstance(node, I.ExtractElement):
        return I.ExtractElement(Undef(node.vector.type), node.index)
    if isinstance(node, I.InsertElement):
        return I.InsertElement(Undef(node.vector.type), Undef(node.element.type), node.index)
    assert isinstance(node, I.ShuffleVector)
    return I.ShuffleVector(Undef(node.ops[0].type), Undef(node.ops[1].type), node.mask_value)


def base_name_for(node: Value) -> str:
    """``<name>.base``, or LLVM's name for an unnamed node's base."""
    if node.name:
        return f"{node.name}.base"
    if isinstance(node, I.Phi):
        return "base_phi"
    if isinstance(node, I.Select):
        return "base_select"
    if isinstance(node, I.ExtractElement):
        return "base_ee"
    if isinstance(node, I.InsertElement):
        return "base_ie"
    return "base_sv"


def fill_vector_base(
    node: Value, base: I.SimpleInstruction, base_of: Callable[[Value, I.Instruction], Value], llvm: int
) -> None:
    """Point the base instruction's operands at the bases of the node's inputs."""
    if isinstance(node, I.ExtractElement):
        base.ops[0] = base_of(node.vector, base)
    elif isinstance(node, I.InsertElement):
        base.ops[0] = base_of(node.vector, base)
        base.ops[1] = base_of(node.element, base)
    else:
        assert isinstance(node, I.ShuffleVector)
        base.ops[0] = base_of(node.ops[0], base)
        if node.is_zero_splat():  # never read: LLVM 14 leaves undef there, LLVM 19 poison
            base.ops[1] = (Poison if llvm >= 15 else Undef)(node.ops[1].type)
        else:
            base.ops[1] = base_of(node.ops[1], base)


def splat_scalar_gep_bases(fn, names: NameUniquer, llvm: int) -> None:
    """A GEP with a scalar base and vector indices gets its base broadcast first (LLVM's pre-pass)::

    %.splatinsert = insertelement <N x T> poison, T %p, i32 0        (LLVM 19: i64 0)
    %.splat = shufflevector <N x T> %.splatinsert, <N x T> poison, <N x i32> zeroinitializer
    """
    for block in fn.blocks:
        for inst in list(block.instructions):
            if (
                not isinstance(inst, I.GetElementPtr)
                or isinstance(inst.pointer.type, VectorType)
                or not isinstance(inst.type, VectorType)
            ):
                continue
            n = inst.type.count
            p = inst.pointer
            vty = VectorType(n, p.type)
            lane0 = ConstantInt(I64 if llvm >= 15 else I32, 0)
            ins = I.InsertElement(Poison(vty), p, lane0, name=names.unique(".splatinsert"))
            splat = I.ShuffleVector(ins, Poison(vty), ZeroInitializer(VectorType(n, I32)), name=names.unique(".splat"))
            block.insert_before(inst, ins)
            block.insert_before(inst, splat)
            inst.ops[0] = splat


def is_noop_pointer_cast(v: Value) -> TypeGuard[I.Cast]:
    """A bitcast or same-space addrspacecast between pointers, or between vectors of pointers (no code)."""
    if not isinstance(v, I.Cast) or v.opcode not in ("bitcast", "addrspacecast"):
        return False
    src, dst = v.value.type, v.type
    if isinstance(src, VectorType) and isinstance(dst, VectorType):
        src, dst = src.element, dst.element
    return isinstance(src, PointerType) and isinstance(dst, PointerType) and src.addrspace == dst.addrspace


def relocate_type(ty: Type, opaque: bool) -> Type:
    """The type a gc.relocate of a value of type ``ty`` returns (``i8 addrspace(1)*``, or a vector of it)."""
    elem = ty.element if isinstance(ty, VectorType) else ty
    space = elem.addrspace if isinstance(elem, PointerType) else GC_ADDRSPACE
    rty: Type = PointerType(None if opaque else I8, space)
    return VectorType(ty.count, rty) if isinstance(ty, VectorType) else rty


def is_opaque_gc_type(ty: Type) -> bool:
    """An opaque ``ptr``, or a vector of them."""
    elem = ty.element if isinstance(ty, VectorType) else ty
    return isinstance(elem, PointerType) and elem.is_opaque
