"""PlaceSafepoints as in LLVM 14: inline the ``@gc.safepoint_poll`` body at function entry and on backedges.

Only functions whose collector is ``gc "statepoint-example"`` or ``gc "coreclr"``
are changed, and never ``@gc.safepoint_poll`` itself.  Per function:

1. blocks unreachable from the entry are deleted (phis forget them);
2. *backedge polls*: for every natural loop (inner loops first) and each latch,
   a poll goes before the latch's terminator unless the loop is a counted loop
   with a short trip count (:mod:`gctoy.passes.counted_loops`) or a call that
   will become a safepoint sits on the dominator-tree path from the latch up to
   the header; locations are sorted by latch block name;
3. the *entry poll*: before the first call that is not an intrinsic, walking
   straight-line code from the entry (through unique-successor blocks whose
   only predecessor is the block before);
4. the poll body is inlined at every location, backedge polls first
   (:mod:`gctoy.passes.inline_poll`).  No statepoints are created here: the
   runtime call inside the poll stays a plain call for RS4GC to rewrite.

Options, written in the pipeline as ``place-safepoints<no-entry;trip-width=16>``
(LLVM 14's hidden ``-spp-*`` flags): ``no-entry``, ``no-backedge``, ``no-call``,
``all-backedges``, ``split-backedge``, ``trip-width=N`` (default 32).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..errors import GCToyError
from ..ir import instructions as I
from ..ir.analysis.cfg import predecessors, reachable_set
from ..ir.analysis.dominators import DominatorTree
from ..ir.analysis.loops import Loop, LoopInfo
from ..ir.module import Module
from ..ir.values import BasicBlock, Function, InlineAsm, Undef, Value
from .registry import register
from .counted_loops import must_be_finite_counted_loop
from .inline_poll import POLL_NAME, SymbolTable, check_poll_function, inline_poll
from .library_functions import is_library_call

#: Collectors whose functions get polls (LLVM compares the gc name as a string).
SAFEPOINT_GCS = ("statepoint-example", "coreclr")

#: Intrinsics that wrap a real call, so the entry poll must come before them.
_CALL_WRAPPING_INTRINSICS = (
    "llvm.experimental.gc.statepoint",
    "llvm.experimental.patchpoint.void",
    "llvm.experimental.patchpoint.i64",
)
#: Intrinsics that may still reach a safepoint (LLVM's callsGCLeafFunction exceptions).
_NON_LEAF_INTRINSICS = (
    "llvm.experimental.gc.statepoint",
    "llvm.experimental.deoptimize",
    "llvm.memcpy.element.unordered.atomic",
    "llvm.memmove.element.unordered.atomic",
)


class PassOptionError(GCToyError):
    """A malformed ``place-safepoints<...>`` option."""


@dataclass(frozen=True)
class SafepointOptions:
    """The knobs of LLVM 14's hidden ``-spp-*`` flags."""

    no_entry: bool = False
    no_backedge: bool = False
    no_call: bool = False
    all_backedges: bool = False
    split_backedge: bool = False
    trip_width: int = 32
    #: the pass as it was around LLVM 3.7 (seed 004): also turn every call that may reach a
    #: safepoint — the inlined polls' runtime calls included — into a ``gc.statepoint`` with a
    #: ``gc.result``, leaving the relocations to RewriteStatepointsForGC
    wrap_calls: bool = False
    #: the LLVM release whose list of C library functions (GC leaves, not safepoints) to follow
    #: (``llvm=19`` knows a few names LLVM 14 does not)
    llvm: int = 14
    #: ``-disable-builtin=NAME``: library functions taken off that list, so a call of one counts as a
    #: safepoint. LLVM 19 reads the option here; LLVM 14's legacy PlaceSafepoints does not (it keeps
    #: the backedge poll of a loop that calls ``ldexp`` under ``-disable-builtin=ldexp``)
    unavailable: frozenset[str] = frozenset()

    @property
    def library_unavailable(self) -> frozenset[str]:
        """The names this release's PlaceSafepoints takes off the library list."""
        return self.unavailable if self.llvm >= 15 else frozenset()

    @classmethod
    def parse(cls, text: str) -> "SafepointOptions":
        """``"no-entry;trip-width=16"`` -> options (``;`` separated, flags without ``spp-``)."""
        flags: dict[str, object] = {}
        unavailable: set[str] = set()
        for item in (p.strip() for p in text.split(";")):
            if not item:
                continue
            key, _, value = item.partition("=")
            key = key.strip().removeprefix("spp-")
            if key in ("trip-width", "counted-loop-trip-width"):
                try:
                    flags["trip_width"] = int(value)
                except ValueError:
                    raise PassOptionError(f"place-safepoints: trip-width needs an integer, got '{value}'") from None
            elif key == "llvm" and value.isdigit() and int(value) >= 14:
                flags["llvm"] = int(value)
            elif key == "disable-builtin" and value:
                unavailable.add(value)
            elif (
                key in ("no-entry", "no-backedge", "no-call", "all-backedges", "split-backedge", "wrap-calls")
                and not value
            ):
                flags[key.replace("-", "_")] = True
            else:
                raise PassOptionError(
                    f"place-safepoints: unknown option '{item}' (known: no-entry, no-backedge, no-call, "
                    "all-backedges, split-backedge, wrap-calls, trip-width=N, llvm=N with N >= 14, disable-builtin=NAME)"
                )
        if unavailable:
            flags["unavailable"] = frozenset(unavailable)
        return cls(**flags)  # type: ignore[arg-type]


def wants_safepoints(fn: Function) -> bool:
    """True for a defined function with a statepoint collector (and not the poll itself)."""
    return not fn.is_declaration and fn.name != POLL_NAME and fn.gc in SAFEPOINT_GCS


# -- step 1 -------------------------------------------------------------------------


def remove_unreachable_blocks(fn: Function) -> list[BasicBlock]:
    """Delete blocks the entry cannot reach, dropping their phi entries; returns them."""
    live = reachable_set(fn)
    dead = [b for b in fn.blocks if b not in live]
    for block in dead:
        for succ in block.successors:
            if succ not in live:
                continue
            for phi in succ.phis():
                assert isinstance(phi, I.Phi)
                had = len(phi.incoming)
                phi.incoming = [(v, b) for v, b in phi.incoming if b is not block]
                if not phi.incoming:
                    fn.replace_all_uses(phi, Undef(phi.type))
                    phi.erase()
                elif had > 1:
                    same = _phi_constant_value(phi)
                    if same is not None:
                        fn.replace_all_uses(phi, same)
                        phi.erase()
    fn.blocks = [b for b in fn.blocks if b in live]
    return dead


def _phi_constant_value(phi: I.Phi) -> Value | None:
    """The single value a phi merges (ignoring itself), as PHINode::hasConstantValue finds it."""
    values = {id(v): v for v, _ in phi.incoming if v is not phi}
    if len(values) > 1:
        return None
    return next(iter(values.values())) if values else Undef(phi.type)


# -- step 2 -------------------------------------------------------------------------


def needs_statepoint(call: I.CallBase, llvm: int = 14, unavailable: frozenset[str] = frozenset()) -> bool:
    """True if the call will become a safepoint (not a GC leaf, a GC intrinsic, a C library function,
    or a call (not an invoke) of inline asm, as LLVM decides)."""
    if isinstance(call, I.Call) and isinstance(call.callee, InlineAsm):
        return False
    if call.string_attr("gc-leaf-function") is not None:
        return False
    callee = call.called_function
    if callee is None:
        return True
    if callee.string_attr("gc-leaf-function") is not None:
        return False
    if callee.name.startswith("llvm."):
        return any(callee.name == n or callee.name.startswith(n + ".") for n in _NON_LEAF_INTRINSICS)
    fn = call.parent.parent if call.parent is not None else None
    return not is_library_call(call, getattr(fn, "module", None), llvm, unavailable)


def call_on_dominator_path(
    latch: BasicBlock, header: BasicBlock, dt: DominatorTree, llvm: int = 14, unavailable: frozenset[str] = frozenset()
) -> bool:
    """True if a block on the idom chain latch -> header holds a call that needs a statepoint."""
    block: BasicBlock | None = latch
    while block is not None:
        if any(isinstance(i, I.CallBase) and needs_statepoint(i, llvm, unavailable) for i in block.instructions):
            return True
        if block is header:
            return False
        block = dt.idom(block)
    return False


def _loops_inner_first(info: LoopInfo) -> list[Loop]:
    out: list[Loop] = []

    def visit(loop: Loop) -> None:
        for child in loop.children:
            visit(child)
        out.append(loop)

    for top in info.top_level:
        visit(top)
    return out


def backedge_poll_locations(fn: Function, opts: SafepointOptions) -> list[I.Instruction]:
    """Latch terminators that need a poll, sorted by latch name, each once."""
    dt = DominatorTree(fn)
    info = LoopInfo(fn, dt)
    found: list[I.Instruction] = []
    for loop in _loops_inner_first(info):
        for latch in loop.latches:
            if not opts.all_backedges:
                if must_be_finite_counted_loop(loop, dt, opts.trip_width):
                    continue
                if not opts.no_call and call_on_dominator_path(
                    latch, loop.header, dt, opts.llvm, opts.library_unavailable
                ):
                    continue
            term = latch.terminator
            assert term is not None  # a latch branches back to the header
            found.append(term)
    found.sort(key=lambda t: t.parent.name or "")
    unique: list[I.Instruction] = []
    for term in found:
        if not any(term is u for u in unique):
            unique.append(term)
    return unique


def split_backedges(fn: Function, terms: list[I.Instruction]) -> list[I.Instruction]:
    """For ``split-backedge``: a new block on each latch -> header edge; returns their branches."""
    dt = DominatorTree(fn)
    out: list[I.Instruction] = []
    for term in terms:
        latch = term.parent
        headers: list[BasicBlock] = []
        for succ in term.successors:
            if dt.dominates(succ, latch) and succ not in headers:
                headers.append(succ)
        for header in headers:
            branch = _split_edge(fn, latch, header).terminator
            assert branch is not None
            out.append(branch)
    return out


def _split_edge(fn: Function, source: BasicBlock, target: BasicBlock) -> BasicBlock:
    term = source.terminator
    assert term is not None
    if len(term.successors) == 1:
        # Not critical (the header has other predecessors): split off the branch.
        new = BasicBlock(SymbolTable(fn).claim(f"{source.name}.split") if source.name else None)
        new.parent = fn
        fn.blocks.insert(fn.blocks.index(source) + 1, new)
        term.parent.instructions.remove(term)
        new.append(term)
        source.append(I.Br(new))
        for phi in target.phis():
            phi.replace_uses_of(source, new)
        return new
    name = f"{source.name}.{target.name}_crit_edge" if source.name and target.name else None
    new = BasicBlock(SymbolTable(fn).claim(name))
    new.parent = fn
    fn.blocks.insert(fn.blocks.index(source) + 1, new)
    new.append(I.Br(target))
    _retarget_first(term, target, new)
    for phi in target.phis():
        assert isinstance(phi, I.Phi)
        for k, (v, b) in enumerate(phi.incoming):
            if b is source:
                phi.incoming[k] = (v, new)
                break
    return new


def _retarget_first(term: I.Instruction, old: BasicBlock, new: BasicBlock) -> None:
    """Point the first edge ``term -> old`` at ``new`` instead."""
    if isinstance(term, I.Br):
        for i, op in enumerate(term.ops):
            if op is old:
                term.ops[i] = new
                return
    elif isinstance(term, I.Switch):
        if term.default is old:
            term.default = new
            return
        for i, (c, b) in enumerate(term.cases):
            if b is old:
                term.cases[i] = (c, new)
                return
    raise GCToyError(f"cannot split a backedge leaving a '{term.opcode}'")


# -- step 3 -------------------------------------------------------------------------


def _skippable_before_entry_poll(call: I.CallBase) -> bool:
    if not isinstance(call, I.Call):
        return False
    callee = call.called_function
    if callee is None or not callee.name.startswith("llvm."):
        return False
    return not any(callee.name == n or callee.name.startswith(n + ".") for n in _CALL_WRAPPING_INTRINSICS)


def entry_poll_location(fn: Function) -> I.Instruction:
    """The instruction the entry poll goes before (see module doc)."""
    preds = predecessors(fn)
    block = fn.entry
    index = 0
    while True:
        inst = block.instructions[index]
        if isinstance(inst, I.CallBase) and not _skippable_before_entry_poll(inst):
            return inst
        if not inst.is_terminator:
            index += 1
            continue
        succs = block.successors
        if len(succs) != 1 or len(preds[succs[0]]) != 1:
            return inst
        block, index = succs[0], 0


# -- the pass -----------------------------------------------------------------------


def place_safepoints_in_function(
    fn: Function, poll: Function | None, opts: SafepointOptions, module: Module
) -> list[I.Call]:
    """Run the pass on one function; returns the runtime calls the inlined polls contain."""
    remove_unreachable_blocks(fn)
    locations: list[I.Instruction] = []
    if not opts.no_backedge:
        terms = backedge_poll_locations(fn, opts)
        locations += split_backedges(fn, terms) if opts.split_backedge else terms
    if not opts.no_entry:
        locations.append(entry_poll_location(fn))
    calls: list[I.Call] = []
    symbols = SymbolTable(fn)
    if locations:
        poll = poll or check_poll_function(module)
        for loc in locations:
            calls += inline_poll(loc, poll, symbols)
    if opts.wrap_calls:
        wrap_calls_in_statepoints(fn, module, symbols)
    return calls


def wrap_calls_in_statepoints(fn: Function, module: Module, symbols: SymbolTable) -> list[I.CallBase]:
    """Seed 004's PlaceSafepoints: each call that may reach a safepoint becomes a bare statepoint.

    ``%r = call T @f(args)`` becomes ``%safepoint_token = call token @llvm.experimental.gc.statepoint...(
    i64 2882400000, i32 0, T (..)* @f, i32 n, i32 0, args, i32 0, i32 0)`` and, if ``%r`` is used,
    ``%r = call T @llvm.experimental.gc.result...(token %safepoint_token)``.  No GC pointer is listed:
    finding them is RewriteStatepointsForGC's job.  Returns the new statepoints."""
    from ..ir.intrinsics import DEFAULT_STATEPOINT_ID
    from ..ir.statepoint import target_attrs
    from ..ir.types import I32, I64, TOKEN, VOID, FunctionType, PointerType, mangle
    from ..ir.values import Attribute, ConstantInt

    made: list[I.CallBase] = []
    for call in [i for i in fn.instructions() if isinstance(i, I.CallBase)]:
        if not needs_statepoint(call) or isinstance(call.callee_name, str) and call.callee_name.startswith("llvm."):
            continue
        target_ty = PointerType(call.ftype, 0) if not call.callee.type.is_opaque else call.callee.type
        sp_ty = FunctionType(TOKEN, (I64, I32, target_ty, I32, I32), True)
        name = f"llvm.experimental.gc.statepoint.{mangle(target_ty)}"
        decl = module.get_or_declare(name, sp_ty)
        for a, at in zip(decl.args, (0, 1, None, 3, 4)):
            if at is not None:
                a.attrs = (Attribute("immarg"),)
        args = [
            ConstantInt(
                I64, DEFAULT_STATEPOINT_ID - (1 << 64) if DEFAULT_STATEPOINT_ID >> 63 else DEFAULT_STATEPOINT_ID
            ),
            ConstantInt(I32, 0),
            call.callee,
            ConstantInt(I32, len(call.args)),
            ConstantInt(I32, 0),
            *call.args,
            ConstantInt(I32, 0),
            ConstantInt(I32, 0),
        ]
        kw: dict[str, Any] = dict(
            arg_attrs=[(), (), target_attrs(target_ty, call.ftype), (), (), *call.arg_attrs, (), ()],
            cc=call.cc,
            bundles=[b for b in call.bundles],
            name=symbols.unique("safepoint_token"),
        )
        if isinstance(call, I.Invoke):
            sp: I.CallBase = I.Invoke(sp_ty, decl, args, call.normal, call.unwind, **kw)
        else:
            sp = I.Call(sp_ty, decl, args, **kw)
        call.parent.insert_before(call, sp)
        made.append(sp)
        users = [u for u in fn.instructions() if any(o is call for o in u.operands)]
        if call.type != VOID and users:
            rdecl = module.get_or_declare(
                f"llvm.experimental.gc.result.{mangle(call.type)}",
                FunctionType(call.type, (TOKEN,), False),
                fn_attrs=(Attribute("nounwind"), Attribute("readnone")),
            )
            result = I.Call(rdecl.ftype, rdecl, [sp], name=call.name)
            call.name = None
            if isinstance(call, I.Invoke):
                call.normal.insert(len(call.normal.phis()), result)
            else:
                call.parent.insert_after(call, result)
            for u in users:
                u.replace_uses_of(call, result)
        call.erase()
    return made


def place_safepoints(module: Module, options: str | SafepointOptions = "") -> Module:
    """Insert entry and backedge polls in every function that asks for statepoints."""
    opts = options if isinstance(options, SafepointOptions) else SafepointOptions.parse(options)
    for fn in list(module.definitions()):
        if wants_safepoints(fn):
            place_safepoints_in_function(fn, None, opts, module)
    return module


register("place-safepoints", options=True)(place_safepoints)
