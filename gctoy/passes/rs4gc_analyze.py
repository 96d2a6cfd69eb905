"""RewriteStatepointsForGC's first phases: tidy, find the calls, liveness, base pointers.

Each phase takes the :class:`~gctoy.passes.rs4gc_state.FunctionState` and returns it with its
own fields filled in; the phases after these (rematerialization, statepoints, uses) are in
:mod:`gctoy.passes.rs4gc_remat`, :mod:`gctoy.passes.rs4gc_statepoints` and :mod:`gctoy.passes.rs4gc_uses`.
"""

from __future__ import annotations

from ..ir import instructions as I
from ..ir.intrinsics import base_name
from ..ir.module import Module
from ..ir.printer import uses_opaque_pointers
from ..ir.statepoint import Statepoint
from ..ir.types import VOID, FunctionType
from ..ir.values import Function, MetadataDef, Value
from .base_pointers import BaseFinder
from .base_vectors import is_handled_gc_type, splat_scalar_gep_bases
from .rs4gc_intrinsics import inline_pointer_intrinsics, pointer_intrinsic_calls
from .rs4gc_invokes import normalize_invokes
from .rs4gc_liveness import OrderedLiveness
from .rs4gc_options import RS4GCOptions, is_gc_leaf_call
from .rs4gc_preprocess import fold_single_entry_phis, remove_unreachable_blocks, sink_branch_conditions
from .rs4gc_report import print_base_pairs, print_live_set
from .rs4gc_state import AfterCall, FunctionState, SafepointRecord, first_insertion_index


def find_safepoints(module: Module, fn: Function, options: RS4GCOptions) -> list[I.CallBase]:
    """The calls the pass rewrites: every call and invoke but GC leaves, intrinsics and statepoints
    (and, unless ``allow_no_deopt``, calls without a deopt bundle)."""
    out = []
    for inst in fn.instructions():
        if (
            isinstance(inst, I.CallBase)
            and not Statepoint.is_statepoint(inst)
            and base_name(inst.callee_name) is None
            and not is_gc_leaf_call(inst, module, options.llvm, options.unavailable)
            and (options.allow_no_deopt or inst.bundle("deopt") is not None)
        ):
            out.append(inst)
    return out


def tidy(state: FunctionState) -> FunctionState:
    """Phases 1-2: drop unreachable blocks, find the calls (``done`` when there is none), fold
    single-entry phis, sink branch conditions, answer ``gc.get.pointer.base/offset``, split invoke
    edges; one record per call."""
    fn, names, llvm = state.fn, state.names, state.options.llvm
    state.changed = remove_unreachable_blocks(fn, state.module, names, llvm)
    calls = find_safepoints(state.module, fn, state.options)
    asked = pointer_intrinsic_calls(fn)
    if not calls and not asked:
        state.done = True
        return state
    fold_single_entry_phis(fn)
    sink_branch_conditions(fn)
    splat_scalar_gep_bases(fn, names, llvm)
    state.finder = BaseFinder(names, lambda: empty_metadata_ref(state.module), llvm=llvm)
    if asked:
        inline_pointer_intrinsics(state.module, fn, asked, state.finder, names)
        state.changed = True
    if not calls:
        state.done = True
        return state
    normalize_invokes(fn, names, calls)
    state.records = [SafepointRecord(c) for c in calls]
    return state


def liveness(state: FunctionState) -> FunctionState:
    """Phase 3: the GC pointers live across each call (its deopt operands held live just after it)."""
    for r in state.records:
        deopt = r.call.bundle("deopt")
        # constants too (they are never live): LLVM declares @__tmp_use for any GC pointer held
        gc_deopt = [v for v in (deopt.inputs if deopt else []) if is_handled_gc_type(v.type)]
        state.holders += hold(state.module, r.call, gc_deopt)
    live = OrderedLiveness(state.fn)
    opts = state.options
    for r in state.records:
        r.live = live.live_at(r.call)
        if opts.print_liveset or opts.print_liveset_size:
            print_live_set(r.call, r.live, opts.print_liveset, opts.print_liveset_size)
    return state


def bases(state: FunctionState, finder_class: type[BaseFinder] = BaseFinder) -> FunctionState:
    """Phase 4: the base of every live value (inserting base phis and selects); a value in a call's
    deopt bundle is its own base there.  A lab passes its own ``finder_class``."""
    finder = (
        state.finder
        if type(state.finder) is finder_class
        else finder_class(state.names, lambda: empty_metadata_ref(state.module), llvm=state.options.llvm)
    )
    # filled call by call: a value in one call's deopt bundle is its own base only until a later
    # call finds its base the ordinary way (LLVM 14 works like this)
    for r in state.records:
        deopt = r.call.bundle("deopt")
        in_deopt = {id(v) for v in (deopt.inputs if deopt else [])}
        for v in r.live:
            state.bases[id(v)] = v if id(v) in in_deopt else finder.find_base(v)
    if state.options.print_base_pointers:
        print_pairs(state, "Base Pairs (w/o Relocation):")
    return state


def liveness_with_bases(state: FunctionState) -> FunctionState:
    """Phase 5: liveness again with each base held just after each call; a value newly live is its
    own base."""
    for r in state.records:
        state.holders += hold(state.module, r.call, [state.bases[id(v)] for v in r.live])
    live = OrderedLiveness(state.fn)
    for r in state.records:
        r.live = live.live_at(r.call)
        for v in r.live:
            state.bases.setdefault(id(v), v)
    for h in state.holders:
        h.erase()
    state.holders = []
    if state.options.print_base_pointers:
        print_pairs(state, "Base Pairs: (w/Relocation)")
    return state


def hold(module: Module, call: I.CallBase, values: list[Value]) -> list[I.Call]:
    """``call void (...) @__tmp_use(values...)`` just after ``call`` (both edges of an invoke),
    so that liveness sees the values used after the call."""
    if not values:
        return []
    # LLVM 14 leaves this declaration in the module once it has used it
    tmp = module.get_or_declare("__tmp_use", FunctionType(VOID, (), True))
    points = [call.normal, call.unwind] if isinstance(call, I.Invoke) else [AfterCall(call)]
    out = []
    for block in points:
        h = I.Call(tmp.ftype, tmp, list(values))
        block.insert(first_insertion_index(block), h)
        out.append(h)
    return out


def print_pairs(state: FunctionState, title: str) -> None:
    """LLVM's ``-spp-print-base-pointers`` list: each live value once, in the order first seen."""
    seen: dict[int, Value] = {}
    for r in state.records:
        for v in r.live:
            seen.setdefault(id(v), v)
    pairs = [(v, state.bases[k]) for k, v in seen.items()]
    print_base_pairs(title, pairs, uses_opaque_pointers(state.module))


def empty_metadata_ref(module: Module) -> str:
    """``!N`` of an empty metadata node (``!{}``), added to the module when it has none."""
    for md in module.metadata:
        if md.name.isdigit() and md.text.strip() == "!{}" and not md.distinct:
            return f"!{md.name}"
    used = [int(md.name) for md in module.metadata if md.name.isdigit()]
    n = max(used, default=-1) + 1
    module.metadata.append(MetadataDef(str(n), "!{}"))
    return f"!{n}"
