"""Names of the GC intrinsics and their mangling in typed and opaque IR."""

from __future__ import annotations

from .types import FunctionType, PointerType, Type, erase_pointees, mangle

STATEPOINT = "llvm.experimental.gc.statepoint"
RELOCATE = "llvm.experimental.gc.relocate"
RESULT = "llvm.experimental.gc.result"
GC_INTRINSIC_PREFIXES = (STATEPOINT, RELOCATE, RESULT)

#: ``StatepointDirectives::DefaultStatepointID`` (0xABCDEF00).
DEFAULT_STATEPOINT_ID = 2882400000


def projection_attrs(llvm: int = 14) -> tuple:
    """The function attributes LLVM ``llvm`` gives a ``gc.relocate`` or ``gc.result`` declaration it makes:
    ``nounwind readnone`` in LLVM 14; in LLVM 19 (gctoy's rules for every release after 14)
    ``memory(none)`` replaces ``readnone`` and the intrinsic table adds ``nocallback nofree nosync willreturn``."""
    from .values import Attribute

    if llvm < 15:
        return (Attribute("nounwind"), Attribute("readnone"))
    kinds = ("nocallback", "nofree", "nosync", "nounwind", "willreturn")
    return (*(Attribute(k) for k in kinds), Attribute("memory", "none", style="paren"))


def base_name(name: str | None) -> str | None:
    """``llvm.experimental.gc.relocate.p1i8`` -> ``llvm.experimental.gc.relocate`` (None if not ours)."""
    if name is None:
        return None
    for prefix in GC_INTRINSIC_PREFIXES:
        if name == prefix or name.startswith(prefix + "."):
            return prefix
    return None


def is_statepoint_name(name: str | None) -> bool:
    """True for ``llvm.experimental.gc.statepoint.*``."""
    return base_name(name) == STATEPOINT


def is_relocate_name(name: str | None) -> bool:
    """True for ``llvm.experimental.gc.relocate.*``."""
    return base_name(name) == RELOCATE


def is_result_name(name: str | None) -> bool:
    """True for ``llvm.experimental.gc.result.*``."""
    return base_name(name) == RESULT


def intrinsic_name(name: str, ftype: FunctionType, opaque: bool) -> str:
    """The name an intrinsic declaration must carry for its type, in typed or opaque IR.

    ``gc.statepoint`` is overloaded on the callee pointer type (param 2, or 0 in
    the oldest form), ``gc.relocate`` and ``gc.result`` on their result type.
    """
    base = base_name(name)
    if base is None:
        return name
    if base == STATEPOINT:
        callee_ty = _statepoint_callee_param(ftype)
        if callee_ty is None:
            return name
        return f"{base}.{mangle(erase_pointees(callee_ty) if opaque else callee_ty)}"
    ret: Type = ftype.ret
    return f"{base}.{mangle(erase_pointees(ret) if opaque else ret)}"


def _statepoint_callee_param(ftype: FunctionType) -> Type | None:
    for p in ftype.params[:3]:
        if isinstance(p, PointerType):
            return p
    return None


def remangle_for_opaque_pointers(module) -> None:
    """Give the GC intrinsics of a module read with opaque pointers their opaque names, as LLVM does.

    ``@llvm.experimental.gc.statepoint.p0f_isVoidf`` in a module that spells pointers ``ptr``
    becomes ``@llvm.experimental.gc.statepoint.p0``; declarations that then share a name are one.
    """
    for fn in list(module.functions):
        if not fn.is_declaration or base_name(fn.name) is None:
            continue
        new = intrinsic_name(fn.name, fn.ftype, True)
        if new == fn.name:
            continue
        same = module.get_function(new)
        if same is None:
            module.rename(fn, new)
        elif same.ftype == fn.ftype:
            for user in module.definitions():
                user.replace_all_uses(fn, same)
            module.remove_function(fn)
