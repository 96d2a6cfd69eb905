"""``statepoints-to-gcroots``: RS4GC's statepoints rewritten as a shadow-stack frontend writes them.

Input: a module after ``rewrite-statepoints-for-gc``. RS4GC has already done the hard part
of the abstract machine model: it found every GC pointer live across each call, and for a
derived pointer the base it points into, and it named the result of each relocation
(``gc.relocate(token, base, derived)``). This pass keeps that analysis and swaps the
mechanism: instead of a stack map that tells the collector where the live pointers are,
the function spills them itself into *roots*, stack slots registered with ``@llvm.gcroot``
that ``shadow-stack-gc-lowering`` turns into fields of a StackEntry on
``@llvm_gc_root_chain``.

Per function that has a statepoint or a statepoint strategy (``statepoint-example``, ``coreclr``):

* ``gc "shadow-stack"``, and ``nounwind``: the guest runtime never unwinds, and a function
  that may throw would get every call wrapped in an ``invoke`` to a frame-popping
  ``gc_cleanup`` pad by the lowering;
* entry block: ``K`` root allocas ``%root<i>`` holding a GC pointer, where ``K`` is the
  largest number of distinct bases live across any one call; each is stored ``null``
  straight after the allocas (the initialisation LLVM's InitRoots would otherwise add)
  and registered with ``call void @llvm.gcroot(i8** %root<i>, i8* null)``;
* each statepoint becomes the plain call (or invoke) it wraps. Just before it, the
  byte offset of every derived pointer from its base is computed (two ``ptrtoint`` and a
  ``sub``) and each distinct base is stored to root ``0, 1, ...`` of that call;
* each ``gc.relocate`` becomes a ``load`` of its base's root (one load per base and block)
  and, for a derived pointer, ``getelementptr i8, <reloaded base>, <offset>``: the
  collector moved the object, the offset into it did not change (a pointer re-derived
  this way keeps its offset value for later calls, so it is computed once);
* ``gc.result`` is the new call's value.

Typed and opaque pointers both work: roots are ``i8 addrspace(N)*`` slots passed to
``llvm.gcroot(i8**, i8*)`` through a bitcast, or ``ptr addrspace(N)`` slots passed as ``ptr``.
Deopt and GC-transition operands have no place in a shadow-stack frame and are rejected.

Roots are reused from call to call: a slot is only read right after the call that wrote
it, so call ``n`` may put any base in any slot. A slot keeps its last base until it is
overwritten; that object stays reachable a little longer (the collector updates the slot
like every root), which is the usual cost of a shadow stack without liveness-precise
clearing. Roots with metadata come first in a FrameMap; these roots have none (the guest
heap describes objects by their pointer masks), so ``NumMeta`` is 0.

What a frame looks like after the lowering (``K = 2``)::

    %gc_stackentry.F = { %gc_stackentry { Next, Map }, root0, root1 }
    higher addresses
    | root1            |  entry + 24
    | root0            |  entry + 16
    | Map  -> @__gc_F  |  entry + 8    @__gc_F = { NumRoots = 2, NumMeta = 0 }
    | Next -> caller's |  entry + 0    <- @llvm_gc_root_chain while F runs
"""

from __future__ import annotations

import re
from typing import Any

from ..errors import VerifyError
from ..ir import instructions as I
from ..ir.intrinsics import is_relocate_name, is_result_name, is_statepoint_name
from ..ir.module import Module, resolve_attrs
from ..ir.statepoint import GCRelocate, Statepoint, statepoint_unwind_map, token_statepoint
from ..ir.types import I8, I64, VOID, FunctionType, PointerType, Type
from ..ir.values import Attribute, Constant, ConstantExpr, ConstantNull, Function, Value
from .registry import register
from .rewrite_statepoints import STATEPOINT_STRATEGIES

GCROOT = "llvm.gcroot"
SHADOW_STACK = "shadow-stack"
ROOT_PREFIX = "root"


class GCRootConversionError(VerifyError):
    """A statepoint this pass cannot express with gcroot slots (deopt or transition state)."""


class _Names:
    """Unique local names within one function."""

    def __init__(self, fn: Function) -> None:
        self.used = {a.name for a in fn.args if a.name}
        self.used |= {b.name for b in fn.blocks if b.name}
        self.used |= {i.name for i in fn.instructions() if i.name}

    def fresh(self, hint: str) -> str:
        name, n = hint, 0
        while name in self.used:
            n += 1
            name = f"{hint}{n}"
        self.used.add(name)
        return name


_OWN_SUFFIX = re.compile(r"(\.(reload|rederived|relocated|addr|offset|root|bytes)\d*)+$")


def _hint(v: Value, suffix: str) -> str:
    """``<name of v><suffix>``, with this pass's own suffixes taken off ``v``'s name first."""
    name = getattr(v, "name", None)
    if not name or name.isdigit():
        return suffix.lstrip(".")
    return f"{_OWN_SUFFIX.sub('', name) or name}{suffix}"


def _strip_bitcasts(v: Value) -> Value:
    while isinstance(v, I.Cast) and v.opcode == "bitcast":
        v = v.value
    return v


def _root_type(gc_type: Type) -> PointerType:
    """The type a root slot holds: ``i8 addrspace(N)*`` (typed IR) or ``ptr addrspace(N)``."""
    if not isinstance(gc_type, PointerType):
        raise GCRootConversionError(f"a relocated base of type {gc_type} is not a pointer")
    return PointerType(None if gc_type.is_opaque else I8, gc_type.addrspace)


def _slot_arg_type(opaque: bool) -> PointerType:
    """``llvm.gcroot``'s first parameter: ``i8**`` (typed) or ``ptr``."""
    return PointerType(None) if opaque else PointerType(PointerType(I8))


def _cast(value: Value, to: Type, names: _Names, before: I.Instruction, hint: str) -> Value:
    """``value`` as type ``to`` (a bitcast inserted before ``before`` when the types differ)."""
    if value.type == to:
        return value
    if isinstance(value, Constant):
        return ConstantExpr(to, "bitcast", (value,))
    cast = I.Cast("bitcast", value, to, name=names.fresh(hint))
    before.parent.insert_before(before, cast)
    return cast


def _target_type(sp: Statepoint) -> FunctionType | None:
    """The wrapped call's function type: from the statepoint, else from a directly called function."""
    if sp.target_type is not None:
        return sp.target_type
    return sp.target.ftype if isinstance(sp.target, Function) else None


def _has_attr(fn: Function, module: Module, kind: str) -> bool:
    return any(a.kind == kind and a.style == "plain" for a in resolve_attrs(fn.fn_attrs, module))


class _FunctionRewrite:
    """The conversion of one function."""

    def __init__(self, module: Module, fn: Function) -> None:
        self.module, self.fn = module, fn
        self.names = _Names(fn)
        self.statepoints = [
            Statepoint.of(i) for i in fn.instructions() if isinstance(i, I.CallBase) and Statepoint.is_statepoint(i)
        ]
        unwinds = statepoint_unwind_map(fn)
        self.relocates: dict[int, list[I.Call]] = {id(sp.call): [] for sp in self.statepoints}
        self.results: dict[int, list[I.Call]] = {id(sp.call): [] for sp in self.statepoints}
        for inst in fn.instructions():
            if (
                isinstance(inst, I.Call)
                and inst.args
                and (is_relocate_name(inst.callee_name) or is_result_name(inst.callee_name))
            ):
                owner = token_statepoint(inst.args[0], unwinds)
                if owner is None or id(owner) not in self.relocates:
                    raise GCRootConversionError(f"@{fn.name}: a gc.relocate/gc.result whose token is not a statepoint")
                table = self.relocates if is_relocate_name(inst.callee_name) else self.results
                table[id(owner)].append(inst)
        self.roots: list[I.Alloca] = []
        self.root_type: PointerType | None = None
        #: id(a pointer this pass re-derived) -> (the reloaded base, the offset value): a later
        #: call that relocates the same pair reuses the offset instead of computing it again
        self.derived_from: dict[int, tuple[Value, Value]] = {}

    @property
    def root(self) -> PointerType:
        """The type the root slots hold (known once some statepoint has a base to spill)."""
        assert self.root_type is not None
        return self.root_type

    # ------------------------------------------------------------ analysis

    def _bases(self, sp: Statepoint) -> list[Value]:
        """The distinct non-constant bases relocated at one statepoint, in relocate order."""
        out: list[Value] = []
        for call in self.relocates[id(sp.call)]:
            base = GCRelocate(call, sp).base
            if not isinstance(base, Constant) and not any(base is b for b in out):
                out.append(base)
        return out

    def _check(self, sp: Statepoint) -> None:
        where = f"@{self.fn.name}"
        if sp.deopt_args:
            raise GCRootConversionError(f"{where}: a statepoint with deopt state has no gcroot form")
        if sp.transition_args or sp.is_gc_transition:
            raise GCRootConversionError(f"{where}: a GC-transition statepoint has no gcroot form")
        if sp.num_patch_bytes:
            raise GCRootConversionError(f"{where}: a statepoint with patch bytes has no gcroot form")
        if _target_type(sp) is None:
            raise GCRootConversionError(f"{where}: the statepoint's call target has no known function type")

    # ------------------------------------------------------------ rewriting

    def run(self) -> None:
        for sp in self.statepoints:
            self._check(sp)
        plan = [(sp, self._bases(sp)) for sp in self.statepoints]
        width = max((len(b) for _, b in plan), default=0)
        if width:
            first = next(b[0] for _, b in plan if b)
            self.root_type = _root_type(first.type)
            self._make_roots(width)
        for sp, _ in plan:
            # decoded again: the relocations of earlier calls have been replaced by now
            fresh = Statepoint.of(sp.call)
            self._rewrite(fresh, self._bases(fresh))
        self.fn.gc = SHADOW_STACK
        if not _has_attr(self.fn, self.module, "nounwind"):
            self.fn.fn_attrs = (*self.fn.fn_attrs, Attribute("nounwind"))

    def _make_roots(self, count: int) -> None:
        entry = self.fn.entry
        opaque = self.root.is_opaque
        at = 0
        while at < len(entry.instructions) and isinstance(entry.instructions[at], I.Alloca):
            at += 1
        new: list[I.Instruction] = []
        for i in range(count):
            slot = I.Alloca(self.root, align=8, name=self.names.fresh(f"{ROOT_PREFIX}{i}"))
            if opaque:
                slot.type = PointerType(None)  # as the parser types an alloca in an opaque-pointer module
            self.roots.append(slot)
            new.append(slot)
        new += [I.Store(ConstantNull(self.root), slot, align=8) for slot in self.roots]
        gcroot = self._gcroot_declaration(opaque)
        for slot in self.roots:
            arg: Value = slot
            if not opaque and slot.type != _slot_arg_type(opaque):
                arg = I.Cast("bitcast", slot, _slot_arg_type(opaque), name=self.names.fresh(f"{slot.name}.slot"))
                new.append(arg)
            meta = ConstantNull(PointerType(None if opaque else I8))
            new.append(I.Call(gcroot.ftype, gcroot, [arg, meta]))
        for k, inst in enumerate(new):
            entry.insert(at + k, inst)

    def _gcroot_declaration(self, opaque: bool) -> Function:
        meta = PointerType(None if opaque else I8)
        ftype = FunctionType(VOID, (_slot_arg_type(opaque), meta))
        fn = self.module.get_function(GCROOT)
        if fn is None:
            fn = self.module.add_function(Function(GCROOT, ftype, fn_attrs=(Attribute("nounwind"),)))
        elif fn.ftype != ftype:
            raise GCRootConversionError(f"@{GCROOT} is declared as {fn.ftype}, not {ftype}")
        return fn

    def _rewrite(self, sp: Statepoint, bases: list[Value]) -> None:
        old = sp.call
        names = self.names
        slot_of = {id(b): self.roots[i] for i, b in enumerate(bases)}
        # 1. offsets of derived pointers, then the spills, just before the call
        offsets: dict[tuple[int, int], Value] = {}
        for reloc in self.relocates[id(old)]:
            base, derived = GCRelocate(reloc, sp).base, GCRelocate(reloc, sp).derived
            if derived is base or isinstance(base, Constant) or (id(base), id(derived)) in offsets:
                continue
            known = self.derived_from.get(id(_strip_bitcasts(derived)))
            if known is not None and known[0] is base:
                offsets[(id(base), id(derived))] = known[1]
                continue
            b = I.Cast("ptrtoint", base, I64, name=names.fresh(_hint(base, ".addr")))
            d = I.Cast("ptrtoint", derived, I64, name=names.fresh(_hint(derived, ".addr")))
            off = I.BinaryOp("sub", d, b, name=names.fresh(_hint(derived, ".offset")))
            for inst in (b, d, off):
                old.parent.insert_before(old, inst)
            offsets[(id(base), id(derived))] = off
        for base in bases:
            spilled = _cast(base, self.root, names, old, _hint(base, ".root"))
            old.parent.insert_before(old, I.Store(spilled, slot_of[id(base)], align=8))
        # 2. the call itself
        target_type = _target_type(sp)
        assert target_type is not None  # the statepoints without one were refused in _check
        results = self.results[id(old)]
        hint = "call"
        if results and results[0].name:
            hint = results[0].name
            names.used.discard(hint)  # the gc.result goes away; its name moves to the call
        common: dict[str, Any] = dict(cc=old.cc, name=names.fresh(hint) if target_type.ret != VOID else None)
        if isinstance(old, I.Invoke):
            new: I.CallBase = I.Invoke(target_type, sp.target, list(sp.call_args), old.normal, old.unwind, **common)
        else:
            new = I.Call(target_type, sp.target, list(sp.call_args), **common)
        old.parent.insert_before(old, new)
        for result in results:
            self.fn.replace_all_uses(result, new)
            result.erase()
        # 3. relocations: reload the base, re-derive
        reloads: dict[tuple[int, int], Value] = {}
        for reloc in self.relocates[id(old)]:
            base, derived = GCRelocate(reloc, sp).base, GCRelocate(reloc, sp).derived
            offset: Value | None = None
            if isinstance(base, Constant):
                value: Value = derived  # a constant base never moves, nor what is derived from it
            else:
                key = (id(base), id(reloc.parent))
                if key not in reloads:
                    load = I.Load(self.root, slot_of[id(base)], align=8, name=names.fresh(_hint(base, ".reload")))
                    reloc.parent.insert_before(reloc, load)
                    reloads[key] = load
                value = reloads[key]
                if derived is not base:
                    raw = _cast(
                        value,
                        PointerType(None if self.root.is_opaque else I8, self.root.addrspace),
                        names,
                        reloc,
                        _hint(base, ".bytes"),
                    )
                    offset = offsets[(id(base), id(derived))]
                    value = I.GetElementPtr(I8, raw, [offset], name=names.fresh(_hint(derived, ".rederived")))
                    reloc.parent.insert_before(reloc, value)
            value = _cast(value, reloc.type, names, reloc, _hint(reloc, ".cast"))
            if offset is not None:
                self.derived_from[id(_strip_bitcasts(value))] = (reloads[(id(base), id(reloc.parent))], offset)
            self.fn.replace_all_uses(reloc, value)
            reloc.erase()
        old.erase()


def _drop_unused_declarations(module: Module) -> None:
    used = {id(i.callee) for f in module.functions for i in f.instructions() if isinstance(i, I.CallBase)}
    for fn in list(module.functions):
        name = fn.name
        if (
            fn.is_declaration
            and id(fn) not in used
            and (is_statepoint_name(name) or is_relocate_name(name) or is_result_name(name))
        ):
            module.remove_function(fn)


@register("statepoints-to-gcroots")
def statepoints_to_gcroots(module: Module) -> None:
    """Turn RS4GC's statepoints and relocations into ``gc "shadow-stack"`` functions with gcroot slots."""
    for fn in list(module.functions):
        if fn.is_declaration:
            continue
        has_statepoint = any(Statepoint.is_statepoint(i) for i in fn.instructions())
        if has_statepoint or fn.gc in STATEPOINT_STRATEGIES:
            _FunctionRewrite(module, fn).run()
    _drop_unused_declarations(module)
