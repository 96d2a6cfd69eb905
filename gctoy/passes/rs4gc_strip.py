"""What RewriteStatepointsForGC strips from a module it changed: facts a moving collector breaks.

A pointer argument that was ``dereferenceable(16)`` or ``noalias`` before a statepoint may point
anywhere after one (the object moved), and a function marked ``readnone`` now contains
statepoints that may write the whole heap.  So, as LLVM does, every function loses those
attributes on pointer parameters and results and its memory attributes; every call in a
rewritten function loses them too; loads and stores keep only the metadata still true; and
``llvm.invariant.start`` calls go (their uses become ``undef``, ``poison`` from LLVM 15 on).
"""
from __future__ import annotations

from ..ir import instructions as I
from ..ir.intrinsics import base_name
from ..ir.module import Module, resolve_attrs
from ..ir.types import PointerType, Type
from ..ir.values import Attribute, Poison, Undef
from .rs4gc_options import STATEPOINT_STRATEGIES


_POINTER_ATTRS = frozenset({"dereferenceable", "dereferenceable_or_null", "readnone", "readonly", "writeonly",
                            "noalias", "nofree"})
MEMORY_FN_ATTRS = frozenset({"readnone", "readonly", "writeonly", "argmemonly", "inaccessiblememonly",
                              "inaccessiblemem_or_argmemonly", "nosync", "nofree", "memory"})
_KEPT_MEMORY_METADATA = frozenset({"tbaa", "range", "alias.scope", "nontemporal", "nonnull", "align", "type"})


def _strip(attrs, ty: Type | None, module: Module, fn_level: bool) -> tuple[Attribute, ...]:
    attrs = resolve_attrs(tuple(attrs), module) if any(a.style == "group" for a in attrs) else tuple(attrs)
    if fn_level:
        return tuple(a for a in attrs if a.is_string or a.kind not in MEMORY_FN_ATTRS)
    if not isinstance(ty, PointerType):
        return attrs
    return tuple(a for a in attrs if a.is_string or a.kind not in _POINTER_ATTRS)


def strip_invalid_attributes(module: Module, llvm: int = 14) -> None:
    """Drop attributes and metadata that claim facts a moving collector breaks (LLVM's stripping).

    ``llvm.invariant.start`` calls go too (their uses become ``undef``; ``poison`` from LLVM 15 on):
    memory a collector may move is not unchanging."""
    for fn in module.functions:
        if base_name(fn.name) is not None or fn.name.startswith("llvm."):
            continue
        fn.ret_attrs = _strip(fn.ret_attrs, fn.ftype.ret, module, False)
        for a in fn.args:
            a.attrs = _strip(a.attrs, a.type, module, False)
        if any(a.style != "group" and not a.is_string and a.kind in MEMORY_FN_ATTRS for a in
               resolve_attrs(fn.fn_attrs, module)):
            fn.fn_attrs = _strip(fn.fn_attrs, None, module, True)
        if fn.is_declaration or fn.gc not in STATEPOINT_STRATEGIES:
            continue
        invariant_starts = [inst for inst in fn.instructions() if isinstance(inst, I.Call)
                            and (inst.callee_name or "").startswith("llvm.invariant.start")]
        for start in invariant_starts:
            gone = Poison(start.type) if llvm >= 15 else Undef(start.type)
            for inst in fn.instructions():
                inst.replace_uses_of(start, gone)
            start.erase()
        for inst in fn.instructions():
            if isinstance(inst, I.CallBase):  # every call, gc.result and gc.relocate included
                inst.ret_attrs = _strip(inst.ret_attrs, inst.type, module, False)
                inst.arg_attrs = [_strip(at, a.type, module, False) for at, a in zip(inst.arg_attrs, inst.args)]
            if isinstance(inst, (I.Load, I.Store)):
                inst.metadata = [(k, v) for k, v in inst.metadata if k in _KEPT_MEMORY_METADATA or k == "dbg"]
