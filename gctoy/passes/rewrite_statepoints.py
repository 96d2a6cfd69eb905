"""RewriteStatepointsForGC: make every safepoint's GC pointers explicit (LLVM 14's behaviour).

In the abstract machine model a call simply *may* move objects.  This pass
turns each such call into a relocation sequence::

    %r = call i8 addrspace(1)* @f(i64 %n)              ; %obj live across
      ==>
    %statepoint_token = call token (...) @llvm.experimental.gc.statepoint.p0f_p1i8i64f(
            i64 2882400000, i32 0, i8 addrspace(1)* (i64)* @f, i32 1, i32 0, i64 %n, i32 0, i32 0)
            [ "gc-live"(i8 addrspace(1)* %obj) ]
    %r1 = call i8 addrspace(1)* @llvm.experimental.gc.result.p1i8(token %statepoint_token)
    %obj.relocated = call coldcc i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token %statepoint_token, i32 0, i32 0)

and then rewrites every later use of ``%obj`` to the relocated value (through
new phis where paths merge).  The phases, in order, each a function from a
:class:`~gctoy.passes.rs4gc_state.FunctionState` to the same state filled further
(:data:`PHASES` lists them under the names the book's trace uses):

1. tidy the function (unreachable blocks, single-entry phis, invoke edges);
2. pick the calls: every call and invoke except GC leaves (both in ``rs4gc_analyze.tidy``);
3. liveness of GC pointers (``addrspace(1)``) at each call (``rs4gc_analyze.liveness``);
4. base pointers of everything live, inserting base phis/selects (``rs4gc_analyze.bases``);
5. liveness again, now with each live value's base kept alive too (``rs4gc_analyze.liveness_with_bases``);
6. drop values based on constants, rematerialise cheap derived pointers (``rs4gc_remat``);
7. build statepoints, results and relocates (``rs4gc_statepoints``);
8. rewrite uses, via allocas and mem2reg as LLVM does (``rs4gc_uses``);
9. strip attributes and metadata that relocation makes false, once for the module (``rs4gc_strip``).
"""

from __future__ import annotations

from typing import Any, Sequence

from ..ir import instructions as I
from ..ir.intrinsics import DEFAULT_STATEPOINT_ID
from ..ir.statepoint import StatepointForm
from ..ir.module import Module
from ..ir.types import FunctionType
from ..ir.values import Attribute, Function
from .registry import register
from .rs4gc_analyze import bases, liveness, liveness_with_bases, tidy
from .rs4gc_options import (  # noqa: F401  (re-exported: the pass's public names)
    DEOPTIMIZE,
    DEOPTIMIZE_TARGET,
    STATEPOINT_STRATEGIES,
    RS4GCOptions,
    is_gc_leaf_call,
    parse_options,
)
from .rs4gc_remat import rematerialization
from .rs4gc_state import FunctionState, Phase, PhaseObserver, SafepointRecord  # noqa: F401  (re-exported)
from .rs4gc_statepoints import statepoints
from .rs4gc_strip import strip_invalid_attributes
from .rs4gc_uses import rewrite_uses

#: the phases of one function, in order, under the names the book's trace shows
PHASES: tuple[tuple[str, Phase], ...] = (
    ("tidy", tidy),
    ("liveness", liveness),
    ("bases", bases),
    ("liveness with bases", liveness_with_bases),
    ("rematerialization", rematerialization),
    ("statepoints", statepoints),
    ("uses rewritten", rewrite_uses),
)


def rewrite_function(
    module: Module,
    fn: Function,
    options: RS4GCOptions | None = None,
    observer: PhaseObserver | None = None,
    phases: Sequence[tuple[str, Phase]] = PHASES,
) -> FunctionState:
    """Run ``phases`` on ``fn`` (stopping when one says the rest has nothing to do)."""
    state = FunctionState.start(module, fn, options)
    for name, phase in phases:
        state = phase(state)
        if not state.records:
            break
        if observer is not None:
            observer(name, state)
        if state.done:
            break
    return state


def rewrite_module(
    module: Module,
    options: RS4GCOptions | None = None,
    observer: PhaseObserver | None = None,
    phases: Sequence[tuple[str, Phase]] = PHASES,
) -> list[SafepointRecord]:
    """Run the pass on every function using a statepoint strategy; returns the records made.

    ``observer``, if given, sees each function's state after every phase (see :mod:`gctoy.passes.rs4gc_trace`);
    ``phases`` replaces the pass's own (a lab swaps in its own base pointers)."""
    options = options or RS4GCOptions()
    forms = unwrap_bare_statepoints(module) if options.rewrite_bare_statepoints else []
    records: list[SafepointRecord] = []
    changed = False
    for fn in list(module.definitions()):
        if fn.gc in STATEPOINT_STRATEGIES:
            state = rewrite_function(module, fn, options, observer, phases)
            records += state.records
            changed |= state.changed
    if forms:
        from ..ir.statepoint import convert_statepoints

        convert_statepoints(module, forms[0] if len(set(forms)) == 1 else "modern")
    if records or changed:
        strip_invalid_attributes(module, options.llvm)
    return records


@register("rewrite-statepoints-for-gc", options=True)
def rewrite_statepoints_for_gc(module: Module, options: str | RS4GCOptions = "") -> None:
    """The pass under LLVM's name (options as ``rewrite-statepoints-for-gc<non-relocating>``)."""
    rewrite_module(module, parse_options(options) if isinstance(options, str) else options)


# -- statepoints made by an earlier PlaceSafepoints (before LLVM 3.8) ----------------------------------


def unwrap_bare_statepoints(module: Module) -> list[str]:
    """Turn statepoints that list no GC pointers and have no relocates back into plain calls.

    Before LLVM 3.8, PlaceSafepoints wrapped calls into statepoints and RewriteStatepointsForGC
    then filled in their GC pointers.  Unwrapping keeps everything the statepoint said: its ID and
    patch bytes as ``"statepoint-id"``/``"statepoint-num-patch-bytes"``, its deopt and transition
    arguments as bundles, its ``gc.result`` as the call's value.  Returns the forms found.
    """
    from ..ir.statepoint import statepoints

    forms: list[str] = []
    for fn in list(module.definitions()):
        if fn.gc not in STATEPOINT_STRATEGIES:
            continue
        for sp in statepoints(fn):
            if sp.gc_args or sp.relocates() or not isinstance(sp.target_type, FunctionType):
                continue
            call = sp.call
            attrs = [
                a
                for a in call.fn_attrs
                if not (a.is_string and a.kind in ("statepoint-id", "statepoint-num-patch-bytes"))
            ]
            if sp.id is not None and sp.id != DEFAULT_STATEPOINT_ID:
                attrs.append(Attribute("statepoint-id", str(sp.id), style="string"))
            if sp.num_patch_bytes:
                attrs.append(Attribute("statepoint-num-patch-bytes", str(sp.num_patch_bytes), style="string"))
            bundles = [b for b in call.bundles if b.tag not in ("deopt", "gc-transition", "gc-live")]
            if sp.deopt_args or sp.form is not StatepointForm.MODERN:
                bundles.append(I.OperandBundle("deopt", list(sp.deopt_args)))
            if sp.transition_args or sp.is_gc_transition:
                bundles.append(I.OperandBundle("gc-transition", list(sp.transition_args)))
            kw: dict[str, Any] = dict(fn_attrs=tuple(attrs), cc=call.cc, bundles=bundles, name=None)
            if isinstance(call, I.Invoke):
                plain: I.CallBase = I.Invoke(
                    sp.target_type, sp.target, list(sp.call_args), call.normal, call.unwind, **kw
                )
            else:
                plain = I.Call(sp.target_type, sp.target, list(sp.call_args), **kw)
            result = sp.result()
            call.parent.insert_before(call, plain)
            if result is not None:
                plain.name = result.name
                result.name = None
                fn.replace_all_uses(result, plain)
                result.erase()
            call.erase()
            forms.append(sp.form.value)
    return forms
