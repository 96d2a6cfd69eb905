"""RewriteStatepointsForGC's rematerialization phase: recompute cheap derived pointers after a call.

A derived pointer reached from its base through GEPs and no-op casts (at most 10) whose cost is
under ``-spp-rematerialization-threshold`` is not relocated: its chain is cloned after the
statepoint on top of the relocated base (see :func:`clone_link`).
"""

from __future__ import annotations

from ..ir import instructions as I
from ..ir.types import PointerType
from ..ir.values import Constant, ConstantInt, Value
from .base_pointers import strip_pointer_casts
from .base_vectors import is_noop_pointer_cast
from .rs4gc_state import FunctionState, SafepointRecord


def rematerialization(state: FunctionState) -> FunctionState:
    """Phase 6: values based on constants are never relocated; cheap derived pointers are recomputed."""
    for r in state.records:
        r.live = [v for v in r.live if not isinstance(state.bases[id(v)], Constant)]
        choose_remat(state, r)
    return state


def choose_remat(state: FunctionState, r: SafepointRecord) -> None:
    """Move the derived pointers of ``r`` cheap enough to recompute from ``r.live`` to ``r.remat``."""
    keep = []
    for v in r.live:
        base = state.bases[id(v)]
        if v is base:
            keep.append(v)
            continue
        chain = remat_chain(v, base)
        if chain is None:
            keep.append(v)
            continue
        cost = sum(
            2
            for c in chain
            if isinstance(c, I.GetElementPtr) and any(not isinstance(i, ConstantInt) for i in c.indices)
        )
        if isinstance(r.call, I.Invoke):
            cost *= 2
        if cost >= state.options.remat_threshold:
            keep.append(v)
            continue
        r.remat[id(v)] = (v, chain)
    r.live = keep
    # a rematerialised value's base must stay live
    for _, (v, _) in list(r.remat.items()):
        b = state.bases[id(v)]
        if all(b is not x for x in r.live):
            r.live.append(b)
            state.bases[id(b)] = b


def remat_chain(v: Value, base: Value) -> list[I.Instruction] | None:
    """GEPs and no-op casts from ``v`` back to ``base`` (at most 10), or None."""
    chain: list[I.Instruction] = []
    cur = v
    while cur is not base:
        if len(chain) >= 10:
            return None
        if isinstance(cur, I.GetElementPtr):
            chain.append(cur)
            cur = cur.pointer
        elif is_noop_pointer_cast(cur):
            chain.append(cur)
            cur = cur.value
        elif isinstance(cur, I.Phi) and isinstance(base, I.Phi) and _equivalent_phis(cur, base):
            break
        else:
            return None
    return chain if chain else None


def _equivalent_phis(a: I.Phi, b: I.Phi) -> bool:
    if a.parent is not b.parent or len(a.incoming) != len(b.incoming):
        return False
    return all(
        strip_pointer_casts(x) is strip_pointer_casts(y) and p is q for (x, p), (y, q) in zip(a.incoming, b.incoming)
    )


def clone_link(link: I.Instruction, operand: Value, name: str | None) -> I.Instruction:
    """A copy of one link of a rematerialised chain, on top of ``operand``."""
    if isinstance(link, I.GetElementPtr):
        src = link.source_type
        if operand.type != link.pointer.type:
            src = (
                link.pointer.type.pointee
                if isinstance(link.pointer.type, PointerType) and link.pointer.type.pointee is not None
                else src
            )
        clone = I.GetElementPtr(
            src,
            operand,
            list(link.indices),
            link.inbounds,
            name=name,
            opaque=isinstance(operand.type, PointerType) and operand.type.is_opaque,
        )
        return clone
    assert isinstance(link, I.Cast)
    return I.Cast(link.opcode, operand, link.type, name=name)
