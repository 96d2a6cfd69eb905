"""RewriteStatepointsForGC's last phase: every use after a statepoint reads the relocated value.

As LLVM does it: every value ever relocated gets an alloca, stored after its definition and after
each relocate (or rematerialised copy), loaded before each use; mem2reg then builds the SSA form,
with phis where copies meet.
"""

from __future__ import annotations

from ..ir import instructions as I
from ..ir.types import PointerType, Type
from ..ir.values import ConstantNull, Value, ZeroInitializer
from .mem2reg import promote
from .rs4gc_state import FunctionState, SafepointRecord, first_insertion_index
from .rs4gc_statepoints import alloca_roots


def rewrite_uses(state: FunctionState) -> FunctionState:
    """Phase 8: uses of relocated and rematerialised values read their copies (through mem2reg)."""
    tracked = tracked_values(state)
    if not tracked:
        return state
    fn = state.fn
    entry = fn.entry
    slot: dict[int, I.Alloca] = {}
    for v in tracked:
        slot[id(v)] = I.Alloca(v.type)
    copies = {id(x) for _, made in state.copies for _, x in made}
    # Everything is placed in one pass per block (no list searches):
    #   a phi's use loads at the end of the incoming block; any other use loads just before;
    #   an original is stored after its definition (after the phis and landing pad for a phi,
    #   at the top of the normal destination for an invoke, after the allocas for an argument);
    #   each relocated or rematerialised copy is stored right after it.
    end_loads: dict[int, list[I.Instruction]] = {}
    for blk in fn.blocks:
        for phi in blk.phis():
            assert isinstance(phi, I.Phi)
            for k, (val, pred) in enumerate(phi.incoming):
                if id(val) in slot:
                    ld = I.Load(val.type, slot[id(val)])
                    end_loads.setdefault(id(pred), []).append(ld)
                    phi.incoming[k] = (ld, pred)
    after: dict[int, list[I.Instruction]] = {}
    at_start: dict[int, list[I.Instruction]] = {}
    arg_stores: list[I.Instruction] = []
    for v in tracked:
        store = I.Store(v, slot[id(v)])
        if isinstance(v, I.Invoke):
            at_start.setdefault(id(v.normal), []).append(store)
        elif isinstance(v, I.Phi):
            at_start.setdefault(id(v.parent), []).append(store)
        elif isinstance(v, I.Instruction):
            after.setdefault(id(v), []).append(store)
        else:
            arg_stores.append(store)
    for blk, made in state.copies:
        for v, x in made:
            if id(v) in slot:
                after.setdefault(id(x), []).append(I.Store(x, slot[id(v)]))
    if state.options.clobber_non_live:
        _clobber_stores(state.records, tracked, slot, after, at_start)
    for blk in fn.blocks:
        insts = blk.instructions
        lead = first_insertion_index(blk)
        new: list[I.Instruction] = list(slot.values()) + arg_stores if blk is entry else []
        for idx, inst in enumerate(insts):
            if idx == lead:
                new += at_start.get(id(blk), [])
            if inst.is_terminator:
                new += end_loads.get(id(blk), [])
            if not isinstance(inst, I.Phi) and id(inst) not in copies:
                loads: dict[int, tuple[Value, Value]] = {}
                for op in inst.operands:
                    if id(op) in slot and id(op) not in loads:
                        ld = I.Load(op.type, slot[id(op)])
                        new.append(ld)
                        loads[id(op)] = (op, ld)
                if loads:
                    inst.replace_operands(loads)
            new.append(inst)
            new += after.get(id(inst), [])
        for inst in new:
            inst.parent = blk
        blk.instructions = new
    promote(fn, list(slot.values()), state.names)
    return state


def tracked_values(state: FunctionState) -> list[Value]:
    """The values that get a slot, in LLVM's order: every statepoint's gc-live values (as the
    bundles now read), then the rematerialised originals; the order decides the names of the
    phis mem2reg makes."""
    tracked: list[Value] = []
    seen: set[int] = set()
    roots = {id(a) for a in alloca_roots(state.fn)} if state.options.alloca_roots else set()
    for r in state.records:
        live = r.statepoint.bundle("gc-live") if r.statepoint is not None else None
        for v in live.inputs if live else []:
            if id(v) not in seen and id(v) not in roots:
                seen.add(id(v))
                tracked.append(v)
    for r in state.records:
        for v, _ in r.remat.values():
            if id(v) not in seen:
                seen.add(id(v))
                tracked.append(v)
    return tracked


def _clobber_stores(
    records: list[SafepointRecord], tracked: list[Value], slot: dict[int, I.Alloca], after: dict, at_start: dict
) -> None:
    """``-rs4gc-clobber-non-live``: null into every slot whose value a statepoint neither relocates
    nor rematerializes, just after the statepoint (at the top of both destinations of an invoke)."""
    for r in records:
        sp = r.statepoint
        if sp is None:
            continue
        live = sp.bundle("gc-live")
        kept = {id(v) for v in (live.inputs if live else [])} | {id(v) for v, _ in r.remat.values()}
        dead = [v for v in tracked if id(v) not in kept]
        if not dead:
            continue
        if isinstance(sp, I.Invoke):
            for dest in (sp.normal, sp.unwind):
                at_start[id(dest)] = [I.Store(_null(v.type), slot[id(v)]) for v in dead] + at_start.get(id(dest), [])
        else:
            after[id(sp)] = [I.Store(_null(v.type), slot[id(v)]) for v in dead] + after.get(id(sp), [])


def _null(ty: Type) -> Value:
    return ConstantNull(ty) if isinstance(ty, PointerType) else ZeroInitializer(ty)
