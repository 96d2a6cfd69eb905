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
new phis where paths merge).  The phases, in order:

1. tidy the function (unreachable blocks, single-entry phis, invoke edges);
2. pick the calls: every call and invoke except GC leaves;
3. liveness of GC pointers (``addrspace(1)``) at each call;
4. base pointers of everything live (inserting base phis/selects);
5. liveness again, now with each live value's base kept alive too;
6. drop values based on constants, rematerialise cheap derived pointers;
7. build statepoints, results and relocates;
8. rewrite uses (via allocas and mem2reg, as LLVM does);
9. strip attributes and metadata that relocation makes false.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from ..ir import instructions as I
from ..ir.analysis import predecessors
from ..ir.intrinsics import DEFAULT_STATEPOINT_ID, base_name
from ..ir.module import Module, resolve_attrs
from ..ir.printer import uses_opaque_pointers
from ..ir.statepoint import Statepoint, StatepointForm, target_attrs
from ..ir.types import I32, I64, TOKEN, VOID, FunctionType, PointerType, Type, mangle
from ..ir.values import (
    Attribute,
    BasicBlock,
    Constant,
    ConstantExpr,
    ConstantInt,
    ConstantNull,
    Function,
    MetadataDef,
    Value,
    ZeroInitializer,
    find_string_attr,
)
from . import register
from .base_pointers import BaseFinder, strip_pointer_casts
from .base_vectors import is_handled_gc_type, is_noop_pointer_cast, is_opaque_gc_type, relocate_type, splat_scalar_gep_bases
from .rs4gc_options import (  # noqa: F401  (re-exported: the pass's public names)
    DEOPTIMIZE,
    DEOPTIMIZE_TARGET,
    STATEPOINT_STRATEGIES,
    RS4GCOptions,
    is_gc_leaf_call,
    parse_options,
)
from .mem2reg import promote
from .naming import NameUniquer
from .rs4gc_liveness import OrderedLiveness
from .rs4gc_report import print_base_pairs, print_live_set
from .rs4gc_strip import MEMORY_FN_ATTRS, strip_invalid_attributes
from .rs4gc_preprocess import fold_single_entry_phis, remove_unreachable_blocks, sink_branch_conditions

@dataclass
class SafepointRecord:
    """What the pass decided for one call: live values, their bases, rematerialised values."""

    call: I.CallBase
    live: list[Value] = field(default_factory=list)
    bases: dict[int, Value] = field(default_factory=dict)
    remat: dict[int, tuple[Value, list[I.Instruction]]] = field(default_factory=dict)
    statepoint: I.CallBase | None = None
    relocates: list[I.Call] = field(default_factory=list)
    remat_names: dict = field(default_factory=dict)
    live_ids: set = field(default_factory=set)


#: called after each phase with (phase name, the function, the records so far)
PhaseObserver = Callable[[str, Function, "list[SafepointRecord]"], None]


def rewrite_module(module: Module, options: RS4GCOptions | None = None,
                   observer: PhaseObserver | None = None) -> list[SafepointRecord]:
    """Run the pass on every function using a statepoint strategy; returns the records made.

    ``observer``, if given, sees each function after every phase (see :mod:`gctoy.passes.rs4gc_trace`)."""
    options = options or RS4GCOptions()
    forms = unwrap_bare_statepoints(module) if options.rewrite_bare_statepoints else []
    records: list[SafepointRecord] = []
    changed = False
    for fn in list(module.definitions()):
        if fn.gc in STATEPOINT_STRATEGIES:
            rewriter = _FunctionRewriter(module, fn, options, observer)
            records += rewriter.run()
            changed |= rewriter.changed
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


class _UseIndex:
    """Who uses what, kept up to date while calls are replaced (so replacing is not a scan)."""

    def __init__(self, fn: Function):
        self.users: dict[int, list[I.Instruction]] = {}
        for inst in fn.instructions():
            self.add(inst)

    def add(self, inst: I.Instruction) -> None:
        for op in inst.operands:
            lst = self.users.setdefault(id(op), [])
            if not lst or lst[-1] is not inst:
                lst.append(inst)

    def has_users(self, v: Value) -> bool:
        return any(u.parent is not None for u in self.users.get(id(v), ()))

    def replace(self, old: Value, new: Value) -> None:
        moved = self.users.pop(id(old), [])
        for u in moved:
            u.replace_uses_of(old, new)
        self.users.setdefault(id(new), []).extend(moved)


class _FunctionRewriter:
    def __init__(self, module: Module, fn: Function, options: RS4GCOptions,
                 observer: PhaseObserver | None = None):
        self.m = module
        self.fn = fn
        self.options = options
        self.observe = observer or (lambda phase, fn, records: None)
        self.names = NameUniquer(fn)

    # -- 1. tidy (see rs4gc_preprocess) ------------------------------------------------------
    def normalize_invokes(self, calls: list[I.CallBase]) -> None:
        """Give each invoke's normal and unwind destination the invoke as its only predecessor
        (LLVM's SplitBlockPredecessors; a shared landing pad is split in two)."""
        preds = predecessors(self.fn)
        self._lp_used: set[int] | None = None
        for call in calls:
            if not isinstance(call, I.Invoke):
                continue
            here = call.parent
            for attr in ("normal", "unwind"):
                dest = getattr(call, attr)
                if len(preds.get(dest, [])) > 1:
                    if attr == "unwind":
                        self._split_landing_pad(dest, here, preds)
                    else:
                        new = self._split_predecessors(dest, [here], "")
                        preds[new] = [here]
                        preds[dest] = [new if p is here else p for p in preds[dest]]

    def _new_block_before(self, name: str, before: BasicBlock) -> BasicBlock:
        new = BasicBlock(self.names.unique(name))
        new.parent = self.fn
        self.fn.blocks.insert(self.fn.blocks.index(before), new)
        return new

    def _redirect(self, preds: list[BasicBlock], old: BasicBlock, new: BasicBlock) -> None:
        for p in preds:
            p.terminator.replace_uses_of(old, new)
        for phi in old.phis():
            moved = [(v, b) for v, b in phi.incoming if any(b is p for p in preds)]
            if moved:
                phi.incoming = [(v, b) for v, b in phi.incoming if all(b is not p for p in preds)]
                phi.incoming.append((moved[0][0], new))

    def _split_predecessors(self, dest: BasicBlock, preds: list[BasicBlock], suffix: str) -> BasicBlock:
        new = self._new_block_before(f"{dest.name or ''}{suffix}" or "split", dest)
        new.append(I.Br(dest))
        self._redirect(preds, dest, new)
        return new

    def _split_landing_pad(self, dest: BasicBlock, pred: BasicBlock, preds) -> None:
        from ..errors import GCToyError

        lp = dest.instructions[len(dest.phis())]
        if self._lp_used is None:
            self._lp_used = {id(op) for inst in self.fn.instructions() for op in inst.operands
                             if isinstance(op, I.LandingPad)}
        if dest.phis() or id(lp) in self._lp_used:
            raise GCToyError(f"@{self.fn.name}: gctoy's rewrite-statepoints-for-gc cannot split the landing pad "
                             f"'%{dest.name}' (it has phis or its token is used)")
        others = [p for p in preds[dest] if p is not pred]
        made = []
        for suffix, group in (("", [pred]), (".split-lp", others)):
            new = self._new_block_before(f"{dest.name or ''}{suffix}", dest)
            clone = I.LandingPad(lp.type, lp.cleanup, lp.clauses, name=self.names.unique(f"lpad{suffix}"))
            new.append(clone)
            new.append(I.Br(dest))
            for p in group:
                p.terminator.replace_uses_of(dest, new)
            preds[new] = list(group)
            made.append(new)
        preds[dest] = made
        lp.erase()


    # -- 2. calls ---------------------------------------------------------------------
    def calls(self) -> list[I.CallBase]:
        out = []
        for inst in self.fn.instructions():
            if isinstance(inst, I.CallBase) and not Statepoint.is_statepoint(inst) \
                    and base_name(inst.callee_name) is None and not is_gc_leaf_call(inst, self.m, self.options.llvm) \
                    and (self.options.allow_no_deopt or inst.bundle("deopt") is not None):
                out.append(inst)
        return out

    # -- the whole thing ------------------------------------------------------------------
    def run(self) -> list[SafepointRecord]:
        self.changed = remove_unreachable_blocks(self.fn, self.m, self.names, self.options.llvm)
        calls = self.calls()
        if not calls:
            return []
        fold_single_entry_phis(self.fn)
        sink_branch_conditions(self.fn)
        self.normalize_invokes(calls)
        splat_scalar_gep_bases(self.fn, self.names, self.options.llvm)
        records = [SafepointRecord(c) for c in calls]
        self.observe("tidy", self.fn, records)
        self.records = records
        self.original_name: dict[int, str | None] = {}
        # deopt operands must survive the call: hold them just after it
        holders = []
        for r in records:
            deopt = r.call.bundle("deopt")
            gc_deopt = [v for v in (deopt.inputs if deopt else []) if is_handled_gc_type(v.type)
                        and not isinstance(v, Constant)]
            holders += self._hold(r.call, gc_deopt)
        # 3. liveness at each call: live before the call, minus its own result
        live = OrderedLiveness(self.fn)
        opts = self.options
        for r in records:
            r.live = live.live_at(r.call)
            if opts.print_liveset or opts.print_liveset_size:
                print_live_set(r.call, r.live, opts.print_liveset, opts.print_liveset_size)
        self.observe("liveness", self.fn, records)
        # 4. bases (pointers in a deopt bundle are taken to be bases)
        finder = BaseFinder(self.names, self._empty_metadata_ref, llvm=self.options.llvm)
        # One map for the whole function, filled call by call: the last call to see a value decides
        # its base (a value in one call's deopt bundle is its own base only until a later call
        # finds its base the ordinary way) — LLVM 14 works like this.
        ptr_base: dict[int, Value] = {}
        for r in records:
            deopt = r.call.bundle("deopt")
            in_deopt = {id(v) for v in (deopt.inputs if deopt else [])}
            for v in r.live:
                ptr_base[id(v)] = v if id(v) in in_deopt else finder.find_base(v)
        for r in records:
            r.bases = ptr_base
        if opts.print_base_pointers:
            self._print_pairs("Base Pairs (w/o Relocation):", records)
        self.observe("bases", self.fn, records)
        # 5. liveness again with the bases held just after each call; newly live values are their own base
        for r in records:
            holders += self._hold(r.call, [r.bases[id(v)] for v in r.live
                                                if not isinstance(r.bases[id(v)], Constant)])
        live = OrderedLiveness(self.fn)
        for r in records:
            r.live = live.live_at(r.call)
            for v in r.live:
                r.bases.setdefault(id(v), v)
        for h in holders:
            h.erase()
        if opts.print_base_pointers:
            self._print_pairs("Base Pairs: (w/Relocation)", records)
        self.observe("liveness with bases", self.fn, records)
        # 6. constants are never relocated; cheap derived pointers are recomputed instead
        for r in records:
            r.live = [v for v in r.live if not isinstance(r.bases[id(v)], Constant)]
            self._choose_remat(r)
        self.observe("rematerialization", self.fn, records)
        self.records_with: dict[int, list[SafepointRecord]] = {}
        for r in records:
            r.live_ids = {id(v) for v in r.live}
            for key in r.live_ids | set(r.remat):
                self.records_with.setdefault(key, []).append(r)
        self.base_users: dict[int, list[int]] = {}
        for k, b in records[0].bases.items():
            self.base_users.setdefault(id(b), []).append(k)
        self.uses = _UseIndex(self.fn)
        #: (block, [(original value, its relocated or rematerialised copy)]) per statepoint edge
        self.copies: list[tuple[BasicBlock, list[tuple[Value, Value]]]] = []
        self.copies_of: dict[int, list[tuple[list, int]]] = {}
        # LLVM clones the rematerialised chains (normal edge, then unwind edge) before any statepoint
        for r in records:
            for edge in (["normal", "unwind"] if isinstance(r.call, I.Invoke) else ["here"]):
                for key, (v, chain) in r.remat.items():
                    r.remat_names[(edge, key)] = [self.names.unique(f"{link.name}.remat") if link.name else None
                                                  for link in reversed(chain)]
        if self.options.non_relocating:
            for r in records:
                self._make_statepoint(r, relocate=False)
            self.observe("statepoints", self.fn, records)
            return records
        # 7. statepoints
        for r in records:
            self._make_statepoint(r, relocate=True)
        self.observe("statepoints", self.fn, records)
        # 8. uses
        self._rewrite_uses(records)
        self.observe("uses rewritten", self.fn, records)
        return records

    def _print_pairs(self, title: str, records: list[SafepointRecord]) -> None:
        """LLVM's ``-spp-print-base-pointers`` list: each live value once, in the order first seen."""
        seen: dict[int, Value] = {}
        for r in records:
            for v in r.live:
                seen.setdefault(id(v), v)
        pairs = [(v, records[0].bases[k]) for k, v in seen.items()]
        print_base_pairs(title, pairs, uses_opaque_pointers(self.m))

    def _empty_metadata_ref(self) -> str:
        for md in self.m.metadata:
            if md.name.isdigit() and md.text.strip() == "!{}" and not md.distinct:
                return f"!{md.name}"
        used = [int(md.name) for md in self.m.metadata if md.name.isdigit()]
        n = max(used, default=-1) + 1
        self.m.metadata.append(MetadataDef(str(n), "!{}"))
        return f"!{n}"

    def _hold(self, call: I.CallBase, values: list[Value]) -> list[I.Call]:
        """``call void (...) @__tmp_use(values...)`` just after ``call`` (both edges of an invoke),
        so that liveness sees the values used after the call."""
        if not values:
            return []
        # LLVM 14 leaves this declaration in the module once it has used it
        tmp = self.m.get_or_declare("__tmp_use", FunctionType(VOID, (), True))
        points = [call.normal, call.unwind] if isinstance(call, I.Invoke) else [_AfterCall(call)]
        out = []
        for block in points:
            h = I.Call(tmp.ftype, tmp, list(values))
            block.insert(self._first_insertion_index(block), h)
            out.append(h)
        return out

    def _first_insertion_index(self, block) -> int:
        if isinstance(block, _AfterCall):
            return block.index
        n = len(block.phis())
        if n < len(block.instructions) and isinstance(block.instructions[n], I.LandingPad):
            n += 1
        return n

    # -- 6. rematerialisation -----------------------------------------------------------------
    def _choose_remat(self, r: SafepointRecord) -> None:
        keep = []
        for v in r.live:
            base = r.bases[id(v)]
            if v is base:
                keep.append(v)
                continue
            chain = _remat_chain(v, base)
            if chain is None:
                keep.append(v)
                continue
            cost = sum(2 for c in chain if isinstance(c, I.GetElementPtr)
                       and any(not isinstance(i, ConstantInt) for i in c.indices))
            if isinstance(r.call, I.Invoke):
                cost *= 2
            if cost >= self.options.remat_threshold:
                keep.append(v)
                continue
            r.remat[id(v)] = (v, chain)
        r.live = keep
        # a rematerialised value's base must stay live
        for _, (v, _) in list(r.remat.items()):
            b = r.bases[id(v)]
            if all(b is not x for x in r.live):
                r.live.append(b)
                r.bases[id(b)] = b

    # -- 7. statepoints --------------------------------------------------------------------------
    def _make_statepoint(self, r: SafepointRecord, relocate: bool) -> None:
        call = r.call
        fn_attrs = list(call.fn_attrs)
        sp_id = _parse_unsigned(call.string_attr("statepoint-id"), DEFAULT_STATEPOINT_ID, 64)
        patch = _parse_unsigned(call.string_attr("statepoint-num-patch-bytes"), 0, 32)
        fn_attrs = [a for a in fn_attrs if not (a.is_string and a.kind in ("statepoint-id",
                                                                            "statepoint-num-patch-bytes"))]
        flags = 0
        transition = call.bundle("gc-transition")
        if transition is not None:
            flags |= 1
        lowering = call.string_attr("deopt-lowering")
        if lowering is None and call.called_function is not None:
            lowering = find_string_attr(resolve_attrs(call.called_function.fn_attrs, self.m), "deopt-lowering")
        if lowering == "live-in":
            flags |= 2
        target = call.callee
        call_fty = call.ftype
        opaque = isinstance(target.type, PointerType) and target.type.is_opaque
        deoptimize = (call.callee_name or "").startswith(DEOPTIMIZE)
        if deoptimize:
            target, call_fty = self._deoptimize_target(call, opaque)
        target_ty = target.type if opaque else PointerType(call_fty, 0)
        params = (I64, I32, target_ty, I32, I32)
        sp_fty = FunctionType(TOKEN, params, True)
        decl_name = f"llvm.experimental.gc.statepoint.{mangle(target_ty)}"
        immarg = (Attribute("immarg"),)
        decl = self.m.get_function(decl_name)
        if decl is None:
            decl = self.m.add_function(Function(decl_name, sp_fty))
            for a, at in zip(decl.args, (immarg, immarg, (), immarg, immarg)):
                a.attrs = at
        gc_live: list[Value] = list(r.live)
        for v in r.live:
            b = r.bases[id(v)]
            if not isinstance(b, Constant) and all(b is not y for y in gc_live):
                gc_live.append(b)
        roots = self._alloca_roots() if self.options.alloca_roots else []
        args = [ConstantInt(I64, _signed(sp_id, 64)), ConstantInt(I32, patch), target,
                ConstantInt(I32, len(call.args)), ConstantInt(I32, flags), *call.args,
                ConstantInt(I32, 0), ConstantInt(I32, 0)]
        # LLVM 14 leaves the call's parameter attributes behind; from 15 on they move to the statepoint
        params_attrs = call.arg_attrs if self.options.llvm >= 15 else [() for _ in call.args]
        arg_attrs = [(), (), target_attrs(target_ty, call_fty), (), (), *params_attrs, (), ()]
        bundles = []
        deopt = call.bundle("deopt")
        if deopt is not None:
            bundles.append(I.OperandBundle("deopt", list(deopt.inputs)))
        if transition is not None:
            bundles.append(I.OperandBundle("gc-transition", list(transition.inputs)))
        if gc_live or roots:
            bundles.append(I.OperandBundle("gc-live", gc_live + roots))
        kw = dict(arg_attrs=arg_attrs, fn_attrs=tuple(a for a in fn_attrs if a.kind not in MEMORY_FN_ATTRS),
                  cc=call.cc, bundles=bundles,
                  name=self.names.unique("statepoint_token" if isinstance(call, I.Invoke) else "safepoint_token"))
        if isinstance(call, I.Invoke):
            sp: I.CallBase = I.Invoke(sp_fty, decl, args, call.normal, call.unwind, **kw)
        else:
            sp = I.Call(sp_fty, decl, args, tail=call.tail, **kw)
        block = call.parent
        block.insert_before(call, sp)
        sp.loc = call.loc  # errors about the statepoint point at the call it replaces
        self.uses.add(sp)
        r.statepoint = sp
        if deoptimize:  # control never comes back: the 'ret' after it goes (and its use of the result)
            block.terminator.erase()
            block.append(I.Unreachable())
        wants_result = call.type != VOID and self.uses.has_users(call)
        # relocates: unwind edge first, then the normal edge; LLVM names the result in between for an
        # invoke and before the relocates for a call, while the original call still holds its name
        relocate = relocate and bool(gc_live)
        result = None
        # LLVM names a call's statepoint "safepoint_token" and an invoke's "statepoint_token" when it
        # makes them, and then (after an invoke's unwind relocates) renames every one but a deoptimize
        # to "statepoint_token": a renamed token that clashed takes a second number from the counter
        if isinstance(call, I.Invoke):
            if relocate:
                lp = call.unwind.instructions[len(call.unwind.phis())]
                self._relocates(r, lp, call.unwind, self._first_insertion_index(call.unwind), gc_live, "unwind")
            self._rename_token(sp)
            if wants_result:
                result = self._make_result(call, sp, call.normal, self._first_insertion_index(call.normal))
            if relocate:
                start = self._first_insertion_index(call.normal) + (1 if result is not None else 0)
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
            self.uses.replace(call, result)
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

    def _make_result(self, call: I.CallBase, token: I.CallBase, block: BasicBlock, at: int) -> I.Call:
        """``gc.result``, named after the original call (which still holds its name, so uniqued)."""
        rname = f"llvm.experimental.gc.result.{mangle(call.type)}"
        rdecl = self.m.get_or_declare(rname, FunctionType(call.type, (TOKEN,), False),
                                      fn_attrs=(Attribute("nounwind"), Attribute("readnone")))
        result = I.Call(rdecl.ftype, rdecl, [token], ret_attrs=call.ret_attrs,
                        name=self.names.unique(call.name) if call.name else None)
        block.insert(at, result)
        return result

    def _substitute(self, old: Value, new: Value) -> None:
        """The call ``old`` became the gc.result ``new``: every record must now speak of ``new``.

        Relocates of ``new`` are still named after ``old`` (LLVM replaces the calls only at the end)."""
        self.original_name[id(new)] = self.original_name.get(id(old), old.name)
        bases = self.records[0].bases  # one map, shared by every record
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

    def _alloca_roots(self) -> list[I.Alloca]:
        """Allocas of the entry block whose allocated type holds GC pointers (stack slots the GC scans)."""
        from ..ir.types import contains_gc_pointer

        return [i for i in self.fn.entry.instructions
                if isinstance(i, I.Alloca) and contains_gc_pointer(i.allocated_type)]

    def _relocates(self, r: SafepointRecord, token: Value, block: BasicBlock, at: int,
                   gc_live: list[Value], edge: str) -> None:
        opaque = any(is_opaque_gc_type(v.type) for v in gc_live)
        made: list[tuple[Value, Value]] = []
        position: dict[int, int] = {}
        for i, v in enumerate(gc_live):
            position.setdefault(id(v), i)
        for i, v in enumerate(gc_live):
            rty = relocate_type(v.type, opaque)
            rdecl = self.m.get_or_declare(
                f"llvm.experimental.gc.relocate.{mangle(rty)}", FunctionType(rty, (TOKEN, I32, I32), False),
                fn_attrs=(Attribute("nounwind"), Attribute("readnone")))
            if rdecl.args and not rdecl.args[1].attrs:
                rdecl.args[1].attrs = rdecl.args[2].attrs = (Attribute("immarg"),)
            base_idx = position[id(self._base_in_record(r, v))]
            vname = self.original_name.get(id(v), v.name)
            rel = I.Call(rdecl.ftype, rdecl, [token, ConstantInt(I32, base_idx), ConstantInt(I32, i)],
                         cc="coldcc", name=self.names.unique(f"{vname}.relocated") if vname else None)
            block.insert(at, rel)
            at += 1
            r.relocates.append(rel)
            value: Value = rel
            if rel.type != v.type:
                cast = I.Cast("bitcast", rel, v.type,
                              name=self.names.unique(f"{rel.name}.casted") if rel.name else None)
                block.insert(at, cast)
                at += 1
                value = cast
            made.append((v, value))
        # rematerialise cheap derived pointers from the relocated bases
        relocated = dict((id(v), x) for v, x in made)
        # LLVM inserts each chain right after the call, so the last chain made comes first
        for key, (v, chain) in reversed(list(r.remat.items())):
            prev: Value = relocated[id(r.bases[id(v)])]
            for link, name in zip(reversed(chain), r.remat_names[(edge, key)]):
                clone = _clone_link(link, prev, name)
                block.insert(at, clone)
                at += 1
                prev = clone
            made.append((v, prev))
        self.copies.append((block, made))
        for k, (v, _) in enumerate(made):
            self.copies_of.setdefault(id(v), []).append((made, k))

    def _base_in_record(self, r: SafepointRecord, v: Value) -> Value:
        b = r.bases.get(id(v), v)
        return v if isinstance(b, Constant) else b

    # -- 8. use rewriting ---------------------------------------------------------------------------
    def _tracked_values(self, records: list[SafepointRecord]) -> list[Value]:
        """The values that get a slot, in LLVM's order: every statepoint's gc-live values (as the
        bundles now read), then the rematerialised originals; the order decides the names of the
        phis mem2reg makes."""
        tracked: list[Value] = []
        seen: set[int] = set()
        roots = {id(a) for a in self._alloca_roots()} if self.options.alloca_roots else set()
        for r in records:
            live = r.statepoint.bundle("gc-live") if r.statepoint is not None else None
            for v in (live.inputs if live else []):
                if id(v) not in seen and id(v) not in roots:
                    seen.add(id(v))
                    tracked.append(v)
        for r in records:
            for v, _ in r.remat.values():
                if id(v) not in seen:
                    seen.add(id(v))
                    tracked.append(v)
        return tracked

    def _rewrite_uses(self, records: list[SafepointRecord]) -> None:
        """Every value ever relocated gets an alloca: stores after its def and after each relocate,
        loads before each use; mem2reg then builds the SSA form with phis where copies meet."""
        tracked = self._tracked_values(records)
        if not tracked:
            return
        fn = self.fn
        entry = fn.entry
        slot: dict[int, I.Alloca] = {}
        for v in tracked:
            slot[id(v)] = I.Alloca(v.type)
        copies = {id(x) for _, made in self.copies for _, x in made}
        # Everything is placed in one pass per block (no list searches):
        #   a phi's use loads at the end of the incoming block; any other use loads just before;
        #   an original is stored after its definition (after the phis and landing pad for a phi,
        #   at the top of the normal destination for an invoke, after the allocas for an argument);
        #   each relocated or rematerialised copy is stored right after it.
        end_loads: dict[int, list[I.Instruction]] = {}
        for blk in fn.blocks:
            for phi in blk.phis():
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
        for blk, made in self.copies:
            for v, x in made:
                if id(v) in slot:
                    after.setdefault(id(x), []).append(I.Store(x, slot[id(v)]))
        if self.options.clobber_non_live:
            self._clobber_stores(records, tracked, slot, after, at_start)
        for blk in fn.blocks:
            insts = blk.instructions
            lead = self._first_insertion_index(blk)
            new: list[I.Instruction] = list(slot.values()) + arg_stores if blk is entry else []
            for idx, inst in enumerate(insts):
                if idx == lead:
                    new += at_start.get(id(blk), [])
                if inst.is_terminator:
                    new += end_loads.get(id(blk), [])
                if not isinstance(inst, I.Phi) and id(inst) not in copies:
                    done: set[int] = set()
                    for op in inst.operands:
                        if id(op) in slot and id(op) not in done:
                            done.add(id(op))
                            ld = I.Load(op.type, slot[id(op)])
                            new.append(ld)
                            inst.replace_uses_of(op, ld)
                new.append(inst)
                new += after.get(id(inst), [])
            for inst in new:
                inst.parent = blk
            blk.instructions = new
        promote(fn, list(slot.values()), self.names)

    @staticmethod
    def _clobber_stores(records: list[SafepointRecord], tracked: list[Value], slot: dict[int, I.Alloca],
                        after: dict, at_start: dict) -> None:
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
                    at_start[id(dest)] = [I.Store(_null(v.type), slot[id(v)]) for v in dead] \
                        + at_start.get(id(dest), [])
            else:
                after[id(sp)] = [I.Store(_null(v.type), slot[id(v)]) for v in dead] + after.get(id(sp), [])


def _null(ty: Type) -> Value:
    return ConstantNull(ty) if isinstance(ty, PointerType) else ZeroInitializer(ty)


class _AfterCall:
    """An insertion point just after a call, shaped like a block for ``_hold_bases``."""

    def __init__(self, call: I.CallBase):
        self.block = call.parent
        self.index = call.parent.instructions.index(call) + 1

    def insert(self, index: int, inst: I.Instruction) -> None:
        self.block.insert(index, inst)


def _remat_chain(v: Value, base: Value) -> list[I.Instruction] | None:
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
    return all(strip_pointer_casts(x) is strip_pointer_casts(y) and p is q
               for (x, p), (y, q) in zip(a.incoming, b.incoming))


def _clone_link(link: I.Instruction, operand: Value, name: str | None) -> I.Instruction:
    if isinstance(link, I.GetElementPtr):
        src = link.source_type
        if operand.type != link.pointer.type:
            src = link.pointer.type.pointee if isinstance(link.pointer.type, PointerType) and \
                link.pointer.type.pointee is not None else src
        clone = I.GetElementPtr(src, operand, list(link.indices), link.inbounds, name=name,
                                opaque=isinstance(operand.type, PointerType) and operand.type.is_opaque)
        return clone
    assert isinstance(link, I.Cast)
    return I.Cast(link.opcode, operand, link.type, name=name)


def _parse_unsigned(text: str | None, default: int, bits: int) -> int:
    if text is None or not text.isdigit():
        return default
    value = int(text)
    return value if value < (1 << bits) else default


def _signed(value: int, bits: int) -> int:
    return value - (1 << bits) if value >> (bits - 1) else value


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
            attrs = [a for a in call.fn_attrs if not (a.is_string and a.kind in ("statepoint-id",
                                                                                  "statepoint-num-patch-bytes"))]
            if sp.id is not None and sp.id != DEFAULT_STATEPOINT_ID:
                attrs.append(Attribute("statepoint-id", str(sp.id), style="string"))
            if sp.num_patch_bytes:
                attrs.append(Attribute("statepoint-num-patch-bytes", str(sp.num_patch_bytes), style="string"))
            bundles = [b for b in call.bundles if b.tag not in ("deopt", "gc-transition", "gc-live")]
            if sp.deopt_args or sp.form is not StatepointForm.MODERN:
                bundles.append(I.OperandBundle("deopt", list(sp.deopt_args)))
            if sp.transition_args or sp.is_gc_transition:
                bundles.append(I.OperandBundle("gc-transition", list(sp.transition_args)))
            kw = dict(fn_attrs=tuple(attrs), cc=call.cc, bundles=bundles, name=None)
            if isinstance(call, I.Invoke):
                plain: I.CallBase = I.Invoke(sp.target_type, sp.target, list(sp.call_args), call.normal,
                                             call.unwind, **kw)
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
