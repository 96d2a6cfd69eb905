"""RewriteStatepointsForGC's statepoint phase: each call becomes a statepoint, a result and relocates.

Old uses still name the old values afterwards; the uses phase (:mod:`gctoy.passes.rs4gc_uses`)
rewires them to the copies this phase records in ``state.copies``.
"""

from __future__ import annotations

from typing import Any

from ..ir import instructions as I
from ..ir.intrinsics import DEFAULT_STATEPOINT_ID, projection_attrs
from ..ir.module import Module, resolve_attrs
from ..ir.statepoint import target_attrs
from ..errors import GCToyError
from ..ir.types import I32, I64, TOKEN, VOID, FunctionType, IntType, PointerType, mangle
from ..ir.values import (
    Attribute,
    BasicBlock,
    Constant,
    ConstantExpr,
    ConstantInt,
    Function,
    Value,
    find_string_attr,
)
from .base_vectors import is_opaque_gc_type, relocate_type
from .rs4gc_intrinsics import pointer_bits
from .rs4gc_options import DEOPTIMIZE, DEOPTIMIZE_TARGET, ELEMENT_ATOMIC_COPIES
from .rs4gc_remat import clone_link
from .rs4gc_state import FunctionState, SafepointRecord, first_insertion_index
from .rs4gc_strip import MEMORY_FN_ATTRS


def statepoints(state: FunctionState) -> FunctionState:
    """Phase 7: build each call's statepoint, gc.result and relocates (no relocates, and ``done``,
    for a non-relocating collector)."""
    builder = _Builder(state)
    # LLVM clones the rematerialised chains (normal edge, then unwind edge) before any statepoint
    for r in state.records:
        for edge in ["normal", "unwind"] if isinstance(r.call, I.Invoke) else ["here"]:
            for key, (v, chain) in r.remat.items():
                r.remat_names[(edge, key)] = [
                    state.names.unique(f"{link.name}.remat") if link.name else None for link in reversed(chain)
                ]
    relocate = not state.options.non_relocating
    for r in state.records:
        builder.make_statepoint(r, relocate)
    state.done = not relocate
    return state


def alloca_roots(fn: Function) -> list[I.Alloca]:
    """Allocas of the entry block whose allocated type holds GC pointers (stack slots the GC scans)."""
    from ..ir.types import contains_gc_pointer

    return [i for i in fn.entry.instructions if isinstance(i, I.Alloca) and contains_gc_pointer(i.allocated_type)]


class _Builder:
    """Makes the statepoints of one function, keeping the records current as calls are replaced."""

    def __init__(self, state: FunctionState):
        self.state = state
        self.m = state.module
        self.names = state.names
        self.original_name: dict[int, str | None] = {}
        self.records_with: dict[int, list[SafepointRecord]] = {}
        for r in state.records:
            r.live_ids = {id(v) for v in r.live}
            for key in r.live_ids | set(r.remat):
                self.records_with.setdefault(key, []).append(r)
        self.base_users: dict[int, list[int]] = {}
        for k, b in state.bases.items():
            self.base_users.setdefault(id(b), []).append(k)
        self.copies_of: dict[int, list[tuple[list, int]]] = {}

    def make_statepoint(self, r: SafepointRecord, relocate: bool) -> None:
        """Replace ``r.call`` by its statepoint (and its result and relocates when ``relocate``)."""
        call = r.call
        sp_id = _parse_unsigned(call.string_attr("statepoint-id"), DEFAULT_STATEPOINT_ID, 64)
        patch = _parse_unsigned(call.string_attr("statepoint-num-patch-bytes"), 0, 32)
        fn_attrs = [
            a for a in call.fn_attrs if not (a.is_string and a.kind in ("statepoint-id", "statepoint-num-patch-bytes"))
        ]
        transition = call.bundle("gc-transition")
        target = call.callee
        call_fty = call.ftype
        opaque = isinstance(target.type, PointerType) and target.type.is_opaque
        deoptimize = (call.callee_name or "").startswith(DEOPTIMIZE)
        call_args, call_arg_attrs = list(call.args), list(call.arg_attrs)
        if deoptimize:
            target, call_fty = self._deoptimize_target(call, opaque)
        elif (call.callee_name or "").startswith(ELEMENT_ATOMIC_COPIES):
            target, call_fty, call_args = self._element_atomic_copy(call, opaque)
            call_arg_attrs = [() for _ in call_args]
        target_ty = target.type if opaque else PointerType(call_fty, 0)
        decl = _declare_statepoint(self.m, target_ty)
        sp_fty = FunctionType(TOKEN, (I64, I32, target_ty, I32, I32), True)
        gc_live: list[Value] = list(r.live)
        for v in r.live:
            b = self.state.bases[id(v)]
            if not isinstance(b, Constant) and all(b is not y for y in gc_live):
                gc_live.append(b)
        roots = alloca_roots(self.state.fn) if self.state.options.alloca_roots else []
        args = [
            ConstantInt(I64, _signed(sp_id, 64)),
            ConstantInt(I32, patch),
            target,
            ConstantInt(I32, len(call_args)),
            ConstantInt(I32, self._flags(call)),
            *call_args,
            ConstantInt(I32, 0),
            ConstantInt(I32, 0),
        ]
        # LLVM 14 leaves the call's parameter attributes behind; from 15 on they move to the statepoint
        params_attrs = call_arg_attrs if self.state.options.llvm >= 15 else [() for _ in call_args]
        arg_attrs = [(), (), target_attrs(target_ty, call_fty), (), (), *params_attrs, (), ()]
        bundles = []
        deopt = call.bundle("deopt")
        if deopt is not None:
            bundles.append(I.OperandBundle("deopt", list(deopt.inputs)))
        if transition is not None:
            bundles.append(I.OperandBundle("gc-transition", list(transition.inputs)))
        if gc_live or roots:
            bundles.append(I.OperandBundle("gc-live", [*gc_live, *roots]))
        kw: dict[str, Any] = dict(
            arg_attrs=arg_attrs,
            fn_attrs=tuple(a for a in fn_attrs if a.kind not in MEMORY_FN_ATTRS),
            cc=call.cc,
            bundles=bundles,
            name=self.names.unique("statepoint_token" if isinstance(call, I.Invoke) else "safepoint_token"),
        )
        if isinstance(call, I.Invoke):
            sp: I.CallBase = I.Invoke(sp_fty, decl, args, call.normal, call.unwind, **kw)
        else:
            assert isinstance(call, I.Call)
            sp = I.Call(sp_fty, decl, args, tail=call.tail, **kw)
        block = call.parent
        block.insert_before(call, sp)
        sp.loc = call.loc  # errors about the statepoint point at the call it replaces
        r.statepoint = sp
        if deoptimize:  # control never comes back: the 'ret' after it goes (and its use of the result)
            block.terminator.erase()
            block.append(I.Unreachable())
        self._result_and_relocates(r, sp, relocate and bool(gc_live), gc_live, deoptimize)

    def _flags(self, call: I.CallBase) -> int:
        """The statepoint's flags: 1 for a GC transition, 2 for ``"deopt-lowering"="live-in"``."""
        flags = 1 if call.bundle("gc-transition") is not None else 0
        lowering = call.string_attr("deopt-lowering")
        if lowering is None and call.called_function is not None:
            lowering = find_string_attr(resolve_attrs(call.called_function.fn_attrs, self.m), "deopt-lowering")
        return flags | (2 if lowering == "live-in" else 0)

    def _result_and_relocates(
        self, r: SafepointRecord, sp: I.CallBase, relocate: bool, gc_live: list[Value], deoptimize: bool
    ) -> None:
        call = r.call
        block = call.parent
        wants_result = call.type != VOID and call.has_users()
        # relocates: unwind edge first, then the normal edge; LLVM names the result in between for an
        # invoke and before the relocates for a call, while the original call still holds its name
        result = None
        # LLVM names a call's statepoint "safepoint_token" and an invoke's "statepoint_token" when it
        # makes them, and then (after an invoke's unwind relocates) renames every one but a deoptimize
        # to "statepoint_token": a renamed token that clashed takes a second number from the counter
        if isinstance(call, I.Invoke):
            if relocate:
                lp = call.unwind.instructions[len(call.unwind.phis())]
                self._relocates(r, lp, call.unwind, first_insertion_index(call.unwind), gc_live, "unwind")
            self._rename_token(sp)
            if wants_result:
                result = self._make_result(call, sp, call.normal, first_insertion_index(call.normal))
            if relocate:
                start = first_insertion_index(call.normal) + (1 if result is not None else 0)
                self._relocates(r, sp, call.normal, start, gc_live, "normal")
        else:
            if not deoptimize:
                self._rename_token(sp)
            if wants_result:
                result = self._make_result(call, sp, block, block.instructions.index(call) + 1)
            if relocate:
                at = block.instructions.index(call) + 1 + (1 if result is not None else 0)
                self._relocates(r, sp, block, at, gc_live, "here")
        if result is not None:
            call.replace_all_uses_with(result)
            self._substitute(call, result)
        call.erase()

    def _rename_token(self, sp: I.CallBase) -> None:
        if sp.name != "statepoint_token":
            self.names.release(sp.name)
            sp.name = self.names.unique("statepoint_token")

    def _deoptimize_target(self, call: I.CallBase, opaque: bool) -> tuple[Value, FunctionType]:
        """``@__llvm_deoptimize``, the runtime function a ``llvm.experimental.deoptimize`` call becomes.

        It returns nothing (control does not come back) and takes the intrinsic's arguments; the
        declaration is added when missing."""
        fty = FunctionType(VOID, tuple(a.type for a in call.args), False)
        fn = self.m.get_function(DEOPTIMIZE_TARGET)
        if fn is None:
            fn = self.m.add_function(Function(DEOPTIMIZE_TARGET, fty))
            if opaque:
                fn.type = PointerType(None, 0)
        if not opaque and fn.ftype != fty:  # declared for other arguments: a cast, as LLVM 14 writes it
            return ConstantExpr(PointerType(fty, 0), "bitcast", (fn,)), fty
        return fn, fty

    def _element_atomic_copy(self, call: I.CallBase, opaque: bool) -> tuple[Value, FunctionType, list[Value]]:
        """``__llvm_mem{cpy,move}_element_unordered_atomic_safepoint_<size>``, the runtime function an
        element-wise atomic copy becomes, and its arguments: each pointer as (base, offset), so that the
        runtime can relocate the objects while it copies.  The offsets are computed just before the call."""
        dest, source, length, size = call.args[:4]
        if not isinstance(size, ConstantInt) or any(isinstance(p, Constant) for p in (dest, source)):
            raise GCToyError(
                f"@{self.state.fn.name}: gctoy's rewrite-statepoints-for-gc needs the pointers of an "
                "element-wise atomic copy to be values and its element size a constant"
            )
        args: list[Value] = []
        for derived in (dest, source):
            base = self.state.bases.get(id(derived), derived)
            int_ty = IntType(pointer_bits(self.m, derived.type))
            base_int = I.Cast("ptrtoint", base, int_ty)
            derived_int = I.Cast("ptrtoint", derived, int_ty)
            offset = I.BinaryOp("sub", derived_int, base_int)
            for inst in (base_int, derived_int, offset):
                call.parent.insert_before(call, inst)
            args += [base, offset]
        args.append(length)
        kind = "memcpy" if "memcpy" in (call.callee_name or "") else "memmove"
        fty = FunctionType(VOID, tuple(a.type for a in args), False)
        name = f"__llvm_{kind}_element_unordered_atomic_safepoint_{size.value}"
        fn = self.m.get_function(name)
        if fn is None:
            fn = self.m.add_function(Function(name, fty))
            if opaque:
                fn.type = PointerType(None, 0)
        return fn, fty, args

    def _make_result(self, call: I.CallBase, token: I.CallBase, block: BasicBlock, at: int) -> I.Call:
        """``gc.result``, named after the original call (which still holds its name, so uniqued)."""
        rname = f"llvm.experimental.gc.result.{mangle(call.type)}"
        rdecl = self.m.get_or_declare(
            rname, FunctionType(call.type, (TOKEN,), False), fn_attrs=projection_attrs(self.state.options.llvm)
        )
        result = I.Call(
            rdecl.ftype,
            rdecl,
            [token],
            ret_attrs=call.ret_attrs,
            name=self.names.unique(call.name) if call.name else None,
        )
        block.insert(at, result)
        return result

    def _substitute(self, old: Value, new: Value) -> None:
        """The call ``old`` became the gc.result ``new``: every record must now speak of ``new``.

        Relocates of ``new`` are still named after ``old`` (LLVM replaces the calls only at the end)."""
        self.original_name[id(new)] = self.original_name.get(id(old), old.name)
        bases = self.state.bases
        if id(old) in bases:
            b = bases.pop(id(old))
            bases[id(new)] = new if b is old else b
        for k in self.base_users.pop(id(old), []):
            if bases.get(k) is old:
                bases[k] = new
        for r in self.records_with.pop(id(old), []):
            if id(old) in r.live_ids:
                r.live = [new if v is old else v for v in r.live]
                r.live_ids.add(id(new))
            if id(old) in r.remat:
                v, chain = r.remat.pop(id(old))
                r.remat[id(new)] = (new, chain)
            self.records_with.setdefault(id(new), []).append(r)
        for made, k in self.copies_of.pop(id(old), []):
            made[k] = (new, made[k][1])
            self.copies_of.setdefault(id(new), []).append((made, k))

    def _relocates(
        self, r: SafepointRecord, token: Value, block: BasicBlock, at: int, gc_live: list[Value], edge: str
    ) -> None:
        opaque = any(is_opaque_gc_type(v.type) for v in gc_live)
        made: list[tuple[Value, Value]] = []
        position: dict[int, int] = {}
        for i, v in enumerate(gc_live):
            position.setdefault(id(v), i)
        for i, v in enumerate(gc_live):
            rty = relocate_type(v.type, opaque)
            rdecl = self.m.get_or_declare(
                f"llvm.experimental.gc.relocate.{mangle(rty)}",
                FunctionType(rty, (TOKEN, I32, I32), False),
                fn_attrs=projection_attrs(self.state.options.llvm),
            )
            if rdecl.args and not rdecl.args[1].attrs:
                rdecl.args[1].attrs = rdecl.args[2].attrs = (Attribute("immarg"),)
            base_idx = position[id(self._base_in_record(v))]
            vname = self.original_name.get(id(v), v.name)
            rel = I.Call(
                rdecl.ftype,
                rdecl,
                [token, ConstantInt(I32, base_idx), ConstantInt(I32, i)],
                cc="coldcc",
                name=self.names.unique(f"{vname}.relocated") if vname else None,
            )
            block.insert(at, rel)
            at += 1
            r.relocates.append(rel)
            value: Value = rel
            if rel.type != v.type:
                cast = I.Cast(
                    "bitcast", rel, v.type, name=self.names.unique(f"{rel.name}.casted") if rel.name else None
                )
                block.insert(at, cast)
                at += 1
                value = cast
            made.append((v, value))
        # rematerialise cheap derived pointers from the relocated bases
        relocated = dict((id(v), x) for v, x in made)
        # LLVM inserts each chain right after the call, so the last chain made comes first
        for key, (v, chain) in reversed(list(r.remat.items())):
            prev: Value = relocated[id(self.state.bases[id(v)])]
            for link, name in zip(reversed(chain), r.remat_names[(edge, key)]):
                clone = clone_link(link, prev, name)
                block.insert(at, clone)
                at += 1
                prev = clone
            made.append((v, prev))
        self.state.copies.append((block, made))
        for k, (v, _) in enumerate(made):
            self.copies_of.setdefault(id(v), []).append((made, k))

    def _base_in_record(self, v: Value) -> Value:
        b = self.state.base_of(v)
        return v if isinstance(b, Constant) else b


def _declare_statepoint(module: Module, target_ty: PointerType) -> Function:
    """``llvm.experimental.gc.statepoint`` for calls of ``target_ty`` (declared when missing)."""
    decl_name = f"llvm.experimental.gc.statepoint.{mangle(target_ty)}"
    decl = module.get_function(decl_name)
    if decl is None:
        sp_fty = FunctionType(TOKEN, (I64, I32, target_ty, I32, I32), True)
        decl = module.add_function(Function(decl_name, sp_fty))
        immarg = (Attribute("immarg"),)
        for a, at in zip(decl.args, (immarg, immarg, (), immarg, immarg)):
            a.attrs = at
    return decl


def _parse_unsigned(text: str | None, default: int, bits: int) -> int:
    if text is None or not text.isdigit():
        return default
    value = int(text)
    return value if value < (1 << bits) else default


def _signed(value: int, bits: int) -> int:
    return value - (1 << bits) if value >> (bits - 1) else value
