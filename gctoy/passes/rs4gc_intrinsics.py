"""``llvm.experimental.gc.get.pointer.base`` and ``.offset``: RewriteStatepointsForGC answers them in place.

A frontend may ask for a derived pointer's base or its offset from that base.  Before any
statepoint is made the pass replaces each call by the answer: the base it finds for the operand
(inserting base phis and selects as for a live pointer), and ``ptrtoint derived - ptrtoint base``.
The base finder is the one the bases phase uses later, so a base found here is not made twice.
"""

from __future__ import annotations

import re

from ..ir import instructions as I
from ..ir.module import Module
from ..ir.types import IntType, PointerType, Type
from ..ir.values import Function, Value
from .base_pointers import BaseFinder
from .naming import NameUniquer, is_numbered

GET_POINTER_BASE = "llvm.experimental.gc.get.pointer.base"
GET_POINTER_OFFSET = "llvm.experimental.gc.get.pointer.offset"


def pointer_intrinsic_calls(fn: Function) -> list[I.Call]:
    """The calls of ``fn`` to ``gc.get.pointer.base`` and ``gc.get.pointer.offset``, in order."""
    return [
        inst
        for inst in fn.instructions()
        if isinstance(inst, I.Call)
        and (inst.callee_name or "").startswith((GET_POINTER_BASE + ".", GET_POINTER_OFFSET + "."))
    ]


def inline_pointer_intrinsics(
    module: Module, fn: Function, calls: list[I.Call], finder: BaseFinder, names: NameUniquer
) -> None:
    """Replace each of ``calls`` by the base or offset it asks for."""
    for call in calls:
        derived = call.args[0]
        base = finder.find_base(derived)
        block = call.parent
        if (call.callee_name or "").startswith(GET_POINTER_BASE + "."):
            answer: Value = base  # the verifier makes the call's type its operand's
            if not answer.name and call.name and not is_numbered(call.name):
                names.release(call.name)
                answer.name, call.name = call.name, None
        else:
            int_ty = IntType(pointer_bits(module, derived.type))
            base_int = I.Cast("ptrtoint", base, int_ty, name=names.unique(f"{base.name}.int") if base.name else None)
            derived_int = I.Cast(
                "ptrtoint", derived, int_ty, name=names.unique(f"{derived.name}.int") if derived.name else None
            )
            answer = I.BinaryOp("sub", derived_int, base_int, name=None if is_numbered(call.name) else call.name)
            call.name = None
            for inst in (base_int, derived_int, answer):
                block.insert_before(call, inst)
        fn.replace_all_uses(call, answer)
        call.erase()


def pointer_bits(module: Module, ty: Type) -> int:
    """The size of a pointer of ``ty``'s address space in the module's data layout (64 by default)."""
    space = ty.addrspace if isinstance(ty, PointerType) else 0
    layout = module.header.datalayout or ""
    for spec in layout.split("-"):
        m = re.fullmatch(r"p(\d*):(\d+):.*", spec)
        if m and int(m.group(1) or 0) == space:
            return int(m.group(2))
    return 64
