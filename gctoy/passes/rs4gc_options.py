"""RewriteStatepointsForGC's options, and which calls it leaves alone (GC leaves)."""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import GCToyError
from ..ir import instructions as I
from ..ir.intrinsics import is_statepoint_name
from ..ir.module import Module, resolve_attrs
from ..ir.values import InlineAsm, find_string_attr
from .library_functions import is_library_call

#: the strategies whose functions RS4GC rewrites (LLVM 14 compares the names)
STATEPOINT_STRATEGIES = ("statepoint-example", "coreclr")
#: the intrinsic a compiled function calls to leave for the interpreter, and what it becomes
DEOPTIMIZE = "llvm.experimental.deoptimize"
DEOPTIMIZE_TARGET = "__llvm_deoptimize"
#: element-wise atomic copies: calls that may reach a safepoint; RS4GC calls a runtime function instead
ELEMENT_ATOMIC_COPIES = ("llvm.memcpy.element.unordered.atomic.", "llvm.memmove.element.unordered.atomic.")


@dataclass
class RS4GCOptions:
    """LLVM's flags for the pass."""

    #: ``-spp-rematerialization-threshold``: rematerialise a derived pointer when its chain costs less
    remat_threshold: int = 6
    #: a collector that never moves objects: statepoints record live values, nothing is relocated
    non_relocating: bool = False
    #: gctoy's extension (LLVM 14's pass leaves allocas alone): list every alloca that holds GC
    #: pointers in each statepoint's "gc-live" bundle, so the stack map records the stack slot itself
    alloca_roots: bool = False
    #: the pass as it was before LLVM 3.8: also rewrite statepoints that list no GC pointers yet
    #: (made by PlaceSafepoints then), and give the results back in those statepoints' signature
    rewrite_bare_statepoints: bool = False
    #: the LLVM release whose pass to follow where releases differ, set with ``llvm=N``: from 15 on
    #: (checked against 19) a loop phi whose other inputs are bases is its own base, and the C
    #: library functions LLVM 19 added are GC leaves. (LLVM 16 and later also rematerialize cheap
    #: derived pointers at their uses first, ``-rs4gc-remat-derived-at-uses``; gctoy does not.)
    llvm: int = 14
    #: ``-spp-print-liveset``, ``-spp-print-liveset-size``, ``-spp-print-base-pointers``: LLVM's
    #: reports on standard error (the live values at each call, their count, the base pairs)
    print_liveset: bool = False
    print_liveset_size: bool = False
    print_base_pointers: bool = False
    #: ``-rs4gc-allow-statepoint-with-no-deopt-info=false``: a call without a "deopt" bundle is left alone
    allow_no_deopt: bool = True
    #: ``-rs4gc-clobber-non-live``: after each statepoint, store null into the slot of every
    #: relocated value that is not live there (a debugging aid: stale uses then read null)
    clobber_non_live: bool = False
    #: ``-disable-builtin=NAME``: C library functions not to take for the known ones (not GC leaves then)
    unavailable: frozenset[str] = frozenset()


def is_gc_leaf_call(
    call: I.CallBase, module: Module | None, llvm: int = 14, unavailable: frozenset[str] = frozenset()
) -> bool:
    """Calls that cannot reach a safepoint: ``"gc-leaf-function"``, intrinsics, known C library functions,
    inline asm.

    The library functions are those LLVM ``llvm`` recognises (:mod:`.library_functions`).  Inline asm is
    where gctoy departs from LLVM 14 and 19 on purpose: they wrap an inline-asm call in a statepoint, which
    their own verifier then rejects ("Cannot take the address of an inline asm!").  PlaceSafepoints already
    treats such a call as no safepoint; gctoy's RS4GC leaves it a plain call to match."""
    if isinstance(call.callee, InlineAsm):
        return True
    if find_string_attr(resolve_attrs(call.fn_attrs, module), "gc-leaf-function") is not None:
        return True
    fn = call.called_function
    if fn is None:
        return False
    if find_string_attr(resolve_attrs(fn.fn_attrs, module), "gc-leaf-function") is not None:
        return True
    name = fn.name or ""
    if name.startswith("llvm."):
        return not (is_statepoint_name(name) or name.startswith(DEOPTIMIZE) or name.startswith(ELEMENT_ATOMIC_COPIES))
    return is_library_call(call, module, llvm, unavailable)


#: boolean options (LLVM's flag names without ``spp-``/``rs4gc-``) -> RS4GCOptions field
_FLAGS = {
    "print-liveset": "print_liveset",
    "print-liveset-size": "print_liveset_size",
    "print-base-pointers": "print_base_pointers",
    "allow-statepoint-with-no-deopt-info": "allow_no_deopt",
    "clobber-non-live": "clobber_non_live",
}


def parse_options(text: str) -> RS4GCOptions:
    """``remat-threshold=N;non-relocating;alloca-roots`` -> RS4GCOptions."""
    opts = RS4GCOptions()
    for item in filter(None, (x.strip() for x in text.split(";"))):
        key, _, value = item.partition("=")
        key = key.removeprefix("spp-").removeprefix("rs4gc-")
        if key in ("remat-threshold", "rematerialization-threshold") and value.isdigit():
            opts.remat_threshold = int(value)
        elif key == "non-relocating" and not value:
            opts.non_relocating = True
        elif key == "alloca-roots" and not value:
            opts.alloca_roots = True
        elif key == "rewrite-bare-statepoints" and not value:
            opts.rewrite_bare_statepoints = True
        elif key == "llvm" and value.isdigit() and int(value) >= 14:
            opts.llvm = int(value)
        elif key in _FLAGS and value in ("", "true", "1", "false", "0"):
            setattr(opts, _FLAGS[key], value in ("", "true", "1"))
        elif key == "disable-builtin" and value:
            opts.unavailable = opts.unavailable | {value}
        elif key == "remat-derived-at-uses" and value in ("false", "0"):
            pass  # LLVM 16+'s flag turned off: what gctoy's pass does anyway
        else:
            raise GCToyError(
                f"unknown rewrite-statepoints-for-gc option '{item}' (known: remat-threshold=N, "
                "non-relocating, alloca-roots, rewrite-bare-statepoints, llvm=N with N >= 14, "
                "print-liveset, print-liveset-size, print-base-pointers, clobber-non-live, "
                "allow-statepoint-with-no-deopt-info=BOOL, remat-derived-at-uses=false, disable-builtin=NAME)"
            )
    return opts
