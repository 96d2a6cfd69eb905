"""``verify-safepoints``: find uses of GC pointers that a statepoint may have moved.

This is gctoy's version of LLVM 14's ``verify<safepoint-ir>`` (SafepointIRVerifier).
The question it answers: after a ``gc.statepoint`` the collector may have moved
every object, so only the values the statepoint hands back (``gc.relocate``,
``gc.result``) and values computed afterwards are safe to use.  Is any old copy
used on some static path after a statepoint?

The analysis is a forward dataflow of *available* GC values::

    AvailableIn(B)  = intersection of AvailableOut(P) over live edges P -> B
    AvailableOut(B) = Contribution(B)                     if B holds a statepoint
                    = AvailableIn(B) | Contribution(B)     otherwise

    Contribution(B) = GC-typed values defined in B after its last statepoint

Sets start from what dominating blocks define (plus the GC arguments, unless a
dominator holds a statepoint) and only shrink until nothing changes.  Values
have one of three states:

    relocated   available: use it freely
    unrelocated defined before a statepoint on every path (or derived from such)
    poisoned    relocated on some paths and unrelocated on others (a phi that
                merges both, or anything derived from that)

Deriving a pointer (phi, GEP, bitcast) from an unrelocated or poisoned one is
not an error by itself; the derived value just inherits the state.  Errors are:

* any operand of GC type that is not available where it is used -- for a phi,
  at the end of the incoming block;
* except comparisons: ``icmp`` of two unrelocated pointers, or of an
  unrelocated pointer and ``null``, gives the same answer before and after the
  statepoint, so it is allowed (but not relocated vs. unrelocated, not a
  non-null constant vs. an unrelocated pointer, and a poisoned pointer only
  against null).

Values whose every source is a constant (``null``, a global, ``undef``) never
move and are never reported.  Blocks that cannot run -- unreachable from the
entry, or only reachable through the untaken side of ``br i1 true/false`` --
are ignored, as are such dead edges.

:func:`find_unrelocated_uses` reports every violation with the statepoint that
made the value unavailable (the nearest one on some path) and that path.
"""
from __future__ import annotations

import enum
from collections import deque
from dataclasses import dataclass, field

from ..errors import GCToyError, VerifyError
from ..ir import instructions as I
from ..ir.analysis import DominatorTree, LocalNames, reverse_post_order
from ..ir.intrinsics import is_relocate_name
from ..ir.module import Module
from ..ir.statepoint import GCRelocate, Statepoint, source_location, statepoint_unwind_map, token_statepoint
from ..ir.types import GC_ADDRSPACE, VOID, ArrayType, NamedStructType, PointerType, StructType, Type, VectorType
from ..ir.values import (
    BasicBlock,
    Constant,
    ConstantAggregate,
    ConstantExpr,
    ConstantInt,
    ConstantNull,
    Function,
    Value,
    ZeroInitializer,
)
from . import register
from .safepoint_deadness import Deadness


# ---------------------------------------------------------------------------
# Which values are GC pointers, and what are they derived from


def holds_gc_pointer(ty: Type) -> bool:
    """True for ``addrspace(1)`` pointers and vectors of them, arrays and structs holding one."""
    if isinstance(ty, PointerType):
        return ty.addrspace == GC_ADDRSPACE
    if isinstance(ty, VectorType):
        return isinstance(ty.element, PointerType) and ty.element.addrspace == GC_ADDRSPACE
    if isinstance(ty, ArrayType):
        return holds_gc_pointer(ty.element)
    if isinstance(ty, (StructType, NamedStructType)):
        return any(holds_gc_pointer(e) for e in ty.elements)
    return False


class BaseKind(enum.Enum):
    """Where a pointer's bases come from, looking through casts, GEPs, phis, selects and relocates."""

    NON_CONSTANT = "non-constant"  # at least one base is a real (movable) object
    EXCLUSIVELY_NULL = "null"  # every base is null: the pointer never moves
    EXCLUSIVELY_SOME_CONSTANT = "constant"  # every base is a constant, some not null


def is_null_constant(v: Value) -> bool:
    """True for the all-zero constant of its type (``null``, ``zeroinitializer``, folded casts of them)."""
    if isinstance(v, (ConstantNull, ZeroInitializer)):
        return True
    if isinstance(v, ConstantAggregate):
        return bool(v.elements) and all(is_null_constant(e) for e in v.elements)
    if isinstance(v, ConstantExpr) and v.operands:
        # The constant folder turns these into plain null when the IR is read.
        if v.opcode == "bitcast":
            return is_null_constant(v.operands[0])
        if v.opcode == "getelementptr":
            return is_null_constant(v.operands[0]) and all(_is_zero_index(i) for i in v.operands[1:])
    return False


def _is_zero_index(v: Value) -> bool:
    return (isinstance(v, ConstantInt) and v.value == 0) or isinstance(v, ZeroInitializer)


def _strip_pointer_casts(v: Value) -> Value:
    """Follow bitcasts, address-space casts, all-zero GEPs and ``returned`` arguments.

    A non-pointer value (an integer, a vector of pointers) comes back unchanged,
    as does the operand of a bitcast from a non-pointer.
    """
    if not isinstance(v.type, PointerType):
        return v
    seen = {id(v)}
    while True:
        if isinstance(v, I.GetElementPtr) or (isinstance(v, ConstantExpr) and v.opcode == "getelementptr"):
            ops = v.operands if isinstance(v, I.GetElementPtr) else list(v.operands)
            if not all(_is_zero_index(i) for i in ops[1:]):
                return v
            v = ops[0]
        elif _opcode(v) == "bitcast":
            v = _first_operand(v)
            if not isinstance(v.type, PointerType):
                return v
        elif _opcode(v) == "addrspacecast":
            v = _first_operand(v)
        elif isinstance(v, I.CallBase) and _returned_argument(v) is not None:
            v = _returned_argument(v)
        else:
            return v
        if id(v) in seen:
            return v
        seen.add(id(v))


def _opcode(v: Value) -> str | None:
    if isinstance(v, I.Cast):
        return v.opcode
    if isinstance(v, ConstantExpr):
        return v.opcode
    return None


def _first_operand(v: Value) -> Value:
    return v.value if isinstance(v, I.Cast) else v.operands[0]  # type: ignore[attr-defined]


def _returned_argument(call: I.CallBase) -> Value | None:
    for arg, attrs in zip(call.args, call.arg_attrs):
        if any(a.kind == "returned" for a in attrs):
            return arg
    return None


def _base_sources(v: Value, unwinds: dict | None = None, seen: dict | None = None) -> list[Value] | None:
    """What ``v`` is derived from, for the base walk (None: ``v`` is a source itself).

    A ``freeze`` and a ``gc.relocate`` are looked through (to the frozen value, to the pointer it
    relocates): neither makes a null pointer non-null or a constant movable.  (LLVM 14 counted each
    as a movable source of its own; LLVM 19 looks through both, and so does gctoy.)
    """
    if isinstance(v, I.Cast):
        return [_strip_pointer_casts(v)]
    if isinstance(v, I.GetElementPtr):
        return [v.pointer]
    if isinstance(v, I.Freeze):
        return [v.value]
    if isinstance(v, I.Phi):
        return [val for val, _ in v.incoming]
    if isinstance(v, I.Select):
        return [v.true_value, v.false_value]
    relocated = _relocated_pointer(v, unwinds, seen)
    return None if relocated is None else [relocated]


def _source_kind(v: Value) -> BaseKind:
    """The kind of a value the base walk stops at."""
    if not isinstance(v, Constant):
        return BaseKind.NON_CONSTANT
    return BaseKind.EXCLUSIVELY_NULL if is_null_constant(v) else BaseKind.EXCLUSIVELY_SOME_CONSTANT


def base_kind(value: Value) -> BaseKind:
    """Classify ``value`` by the sources it may be derived from (LLVM's ``getBaseType``)."""
    work: list[Value] = [value]
    seen: set[int] = set()
    only_null = True
    while work:
        v = work.pop()
        if id(v) in seen:
            continue
        seen.add(id(v))
        sources = _base_sources(v)
        if sources is not None:
            work += sources
            continue
        kind = _source_kind(v)
        if kind is BaseKind.NON_CONSTANT:
            return kind
        only_null = only_null and kind is BaseKind.EXCLUSIVELY_NULL
    return BaseKind.EXCLUSIVELY_NULL if only_null else BaseKind.EXCLUSIVELY_SOME_CONSTANT


_RANK = {BaseKind.EXCLUSIVELY_NULL: 0, BaseKind.EXCLUSIVELY_SOME_CONSTANT: 1, BaseKind.NON_CONSTANT: 2}


class BaseKinds:
    """:func:`base_kind` of every value of one function, found together (one walk per value is quadratic).

    A derived value's kind is the highest of its sources' (null < some constant < non-constant),
    found by raising kinds from the bottom until nothing changes, as a walk would find it.
    """

    def __init__(self, fn: Function) -> None:
        self.sources: dict[int, list[Value]] = {}
        users: dict[int, list[Value]] = {}
        unwinds, seen = statepoint_unwind_map(fn), {}
        for inst in fn.instructions():
            srcs = _base_sources(inst, unwinds, seen)
            if srcs is not None:
                self.sources[id(inst)] = srcs
                for s in srcs:
                    users.setdefault(id(s), []).append(inst)
        # each derived value starts from its direct sources that are not derived, then a raise
        # travels to the users (a kind only goes up, at most twice, so this is linear)
        self.kinds = {k: max((_source_kind(s) for s in srcs if id(s) not in self.sources),
                             key=_RANK.__getitem__, default=BaseKind.EXCLUSIVELY_NULL)
                      for k, srcs in self.sources.items()}
        work = [i for i in fn.instructions() if id(i) in self.sources]
        while work:
            v = work.pop()
            kind = self.kinds[id(v)]
            for u in users.get(id(v), ()):
                if u is not v and _RANK[kind] > _RANK[self.kinds[id(u)]]:
                    self.kinds[id(u)] = kind
                    work.append(u)

    def __call__(self, v: Value) -> BaseKind:
        """The kind of ``v`` (a value of this function, or any other value)."""
        k = self.kinds.get(id(v))
        return k if k is not None else (base_kind(v) if _base_sources(v) is not None else _source_kind(v))

    def may_move(self, v: Value) -> bool:
        """True if some base of ``v`` is a real object."""
        return self(v) is BaseKind.NON_CONSTANT


def _relocated_pointer(v: Value, unwinds: dict | None = None, seen: dict | None = None) -> Value | None:
    """For a well-formed ``gc.relocate``: the derived pointer it relocates; else None.

    ``unwinds`` (``statepoint_unwind_map``) and ``seen`` (call id -> Statepoint) save work per call."""
    if not (isinstance(v, I.Call) and is_relocate_name(v.callee_name) and len(v.args) == 3):
        return None
    sp = token_statepoint(v.args[0], unwinds)
    if sp is None:
        return None
    try:
        view = seen.get(id(sp)) if seen is not None else None
        if view is None:
            view = Statepoint.of(sp)
            if seen is not None:
                seen[id(sp)] = view
        return GCRelocate(v, view).derived
    except (GCToyError, IndexError):
        return None


def may_move(value: Value) -> bool:
    """True if some base of ``value`` is a real object (so a statepoint may relocate it)."""
    return base_kind(value) is BaseKind.NON_CONSTANT


# ---------------------------------------------------------------------------
# The availability dataflow


@dataclass
class BlockState:
    """What the dataflow knows about one live block."""

    available_in: set[Value] = field(default_factory=set)
    available_out: set[Value] = field(default_factory=set)
    contribution: set[Value] = field(default_factory=set)
    #: the block holds a statepoint, so nothing from AvailableIn survives it
    cleared: bool = False


def _transfer(inst: I.Instruction, available: set[Value]) -> bool:
    """Apply one instruction to an available set; True if it was a statepoint (which empties it)."""
    if Statepoint.is_statepoint(inst):
        available.clear()
        return True
    if holds_gc_pointer(inst.type):
        available.add(inst)
    return False


class Availability:
    """The available-value sets of a function, and which defs are unrelocated or poisoned."""

    def __init__(self, fn: Function, dt: DominatorTree, dead: Deadness) -> None:
        self.function = fn
        self.dead = dead
        self.states: dict[BasicBlock, BlockState] = {}
        #: derived from unrelocated values only: legal by itself, never available
        self.unrelocated_defs: set[I.Instruction] = set()
        #: derived from both relocated and unrelocated values: legal by itself, never available
        self.poisoned_defs: set[I.Instruction] = set()
        self.kinds = BaseKinds(fn)
        for b in fn.blocks:
            if dead.is_dead_block(b):
                continue
            st = BlockState()
            for inst in b.instructions:
                st.cleared |= _transfer(inst, st.contribution)
            self.states[b] = st
        for b, st in self.states.items():
            st.available_in = self._dominating_defs(b, dt)
            self._transfer_block(st, contribution_changed=True)
        self._solve()

    # -- queries -------------------------------------------------------------------
    def is_poisoned(self, v: Value) -> bool:
        """True for a def that merges relocated and unrelocated values."""
        return v in self.poisoned_defs

    def is_skipped(self, inst: I.Instruction) -> bool:
        """True for defs that are unrelocated or poisoned by construction (not checked, never available)."""
        return inst in self.unrelocated_defs or inst in self.poisoned_defs

    def phi_edge_is_live(self, phi: I.Phi, incoming: BasicBlock) -> bool:
        """True if ``incoming`` is a live block with a live edge into the phi's block."""
        return incoming in self.states and self.dead.is_live_edge(incoming, phi.parent)  # type: ignore[arg-type]

    # -- construction --------------------------------------------------------------
    def _dominating_defs(self, block: BasicBlock, dt: DominatorTree) -> set[Value]:
        result: set[Value] = set()
        b = dt.idom(block)
        while b is not None:
            st = self.states[b]
            result |= st.contribution
            if st.cleared:
                return result
            b = dt.idom(b)
        result.update(a for a in self.function.args if holds_gc_pointer(a.type))
        return result

    @staticmethod
    def _transfer_block(st: BlockState, contribution_changed: bool) -> None:
        if st.cleared:
            if contribution_changed:
                st.available_out = set(st.contribution)
        else:
            st.available_out = st.contribution | st.available_in

    def _solve(self) -> None:
        # A stack of blocks (LIFO, like LLVM's worklist); sets only shrink, so it ends.
        work = list(self.states)
        queued = set(work)
        while work:
            b = work.pop()
            queued.discard(b)
            st = self.states[b]
            before = len(st.available_in)
            for p in self.dead.preds[b]:
                if p in self.states and not self.dead.is_dead_edge(p, b):
                    st.available_in &= self.states[p].available_out
            inputs_changed = len(st.available_in) != before
            contribution_changed = self._remove_unrelocated_defs(b, st)
            if not inputs_changed and not contribution_changed:
                continue
            out_before = len(st.available_out)
            self._transfer_block(st, contribution_changed)
            if len(st.available_out) != out_before:
                for s in b.successors:
                    if s in self.states and s not in queued:  # dead successors have no state
                        queued.add(s)
                        work.append(s)

    def _remove_unrelocated_defs(self, block: BasicBlock, st: BlockState) -> bool:
        """Classify the phis, GEPs and bitcasts of ``block`` that derive from unavailable values."""
        available = set(st.available_in)
        changed = False
        for inst in block.instructions:
            state = self._derived_state(inst, available)
            if state == "unrelocated":
                st.contribution.discard(inst)
                self.poisoned_defs.discard(inst)
                self.unrelocated_defs.add(inst)
                changed = True
            elif state == "poisoned":
                st.contribution.discard(inst)
                self.poisoned_defs.add(inst)
                changed = True
            else:
                _transfer(inst, available)
        return changed

    def _derived_state(self, inst: I.Instruction, available: set[Value]) -> str | None:
        """``"unrelocated"``/``"poisoned"`` for a def derived from unavailable values, else None."""
        if isinstance(inst, I.Phi):
            if not holds_gc_pointer(inst.type):
                return None
            relocated = unrelocated = False
            for v, b in inst.incoming:
                if not self.phi_edge_is_live(inst, b) or not self.kinds.may_move(v):
                    continue
                if self.is_poisoned(v):
                    return "poisoned"
                if v in self.states[b].available_out:
                    relocated = True
                else:
                    unrelocated = True
            if unrelocated:
                return "poisoned" if relocated else "unrelocated"
            return None
        if isinstance(inst, I.GetElementPtr) or (isinstance(inst, I.Cast) and inst.opcode == "bitcast"):
            if not holds_gc_pointer(inst.type):
                return None
            for v in inst.operands:
                if holds_gc_pointer(v.type) and self.kinds.may_move(v) and v not in available:
                    return "poisoned" if self.is_poisoned(v) else "unrelocated"
        return None


# ---------------------------------------------------------------------------
# Checking every use


@dataclass(frozen=True)
class UnrelocatedUse:
    """One use of a GC value that a statepoint may have moved."""

    #: the instruction that uses the value
    instruction: I.Instruction
    #: the operand: an unrelocated or poisoned value
    value: Value
    #: the statepoint that made ``value`` unavailable (the nearest on some path), if found
    statepoint: I.CallBase | None
    #: block labels from the statepoint's block to the use's block (``("%entry",)`` if one block)
    path: tuple[str, ...]
    #: one sentence saying what is wrong
    message: str
    #: the value is poisoned (relocated on some paths only) rather than unrelocated
    poisoned: bool = False
    #: for a phi operand: the incoming block the value arrives from
    incoming: BasicBlock | None = None
    #: the value that lived across the statepoint: ``value`` itself, or one it was derived from
    origin: Value | None = None

    @property
    def location(self) -> str | None:
        """``file:line:col`` of the use, when it was parsed from a file."""
        return source_location(self.instruction)


@dataclass
class _RawUse:
    inst: I.Instruction
    value: Value
    incoming: BasicBlock | None = None


def _check_instruction(av: Availability, inst: I.Instruction, available: set[Value]) -> list[_RawUse]:
    """The illegal operands of ``inst`` given the values available just before it."""
    found: list[_RawUse] = []
    if isinstance(inst, I.Phi):
        if holds_gc_pointer(inst.type):
            for v, b in inst.incoming:
                if not av.phi_edge_is_live(inst, b):
                    continue
                if av.kinds.may_move(v) and v not in av.states[b].available_out:
                    found.append(_RawUse(inst, v, b))
        return found
    if isinstance(inst, (I.ICmp, I.FCmp)) and holds_gc_pointer(inst.ops[0].type):
        lhs, rhs = inst.ops[0], inst.ops[1]
        kl, kr = av.kinds(lhs), av.kinds(rhs)
        if not _comparison_is_legal(av, available, lhs, rhs, kl, kr):
            for v, k in ((lhs, kl), (rhs, kr)):
                if k is BaseKind.NON_CONSTANT and v not in available:
                    found.append(_RawUse(inst, v))
        return found
    for v in inst.operands:
        if isinstance(v, BasicBlock):
            continue
        if holds_gc_pointer(v.type) and av.kinds.may_move(v) and v not in available:
            found.append(_RawUse(inst, v))
    return found


def _comparison_is_legal(av: Availability, available: set[Value], lhs: Value, rhs: Value,
                         kl: BaseKind, kr: BaseKind) -> bool:
    """May this comparison keep its unrelocated operands?  (Its result is the same before the statepoint.)"""
    if lhs in available or rhs in available:
        return False  # relocated vs. unrelocated: the addresses belong to different moments
    some, moving = BaseKind.EXCLUSIVELY_SOME_CONSTANT, BaseKind.NON_CONSTANT
    if (kl, kr) in ((some, moving), (moving, some)):
        return False  # a fixed non-null address vs. a moving object
    null = BaseKind.EXCLUSIVELY_NULL
    if (av.is_poisoned(lhs) and kr is not null) or (av.is_poisoned(rhs) and kl is not null):
        return False
    return True


def _raw_violations(fn: Function, av: Availability) -> list[_RawUse]:
    found: list[_RawUse] = []
    for b in reverse_post_order(fn):
        st = av.states.get(b)
        if st is None:
            continue
        available = set(st.available_in)
        for inst in b.instructions:
            if av.is_skipped(inst):
                continue
            found += _check_instruction(av, inst, available)
            _transfer(inst, available)
    return found


# ---------------------------------------------------------------------------
# Explaining a violation: which statepoint, along which path


def _unavailable_sources(av: Availability, v: I.Instruction) -> list[tuple[Value, BasicBlock | None]]:
    """The movable inputs an unrelocated/poisoned def was derived from (a phi's with their edge)."""
    if isinstance(v, I.Phi):
        return [(w, b) for w, b in v.incoming
                if av.phi_edge_is_live(v, b) and av.kinds.may_move(w) and w not in av.states[b].available_out]
    return [(w, None) for w in v.operands
            if not isinstance(w, BasicBlock) and holds_gc_pointer(w.type) and av.kinds.may_move(w)]


def _explain(av: Availability, use: _RawUse) -> tuple[I.CallBase | None, list[BasicBlock], Value]:
    """Search backwards from the use for the nearest statepoint that ``use.value`` lived across.

    The search walks instructions backwards along live edges, breadth first.
    Meeting a statepoint first means the value was defined before it on this
    path; meeting the value's definition first means this path is safe -- unless
    the definition is itself derived from unavailable values (a phi or GEP of an
    unrelocated pointer), in which case the search goes on from there for those
    values.  Returns the statepoint, the blocks from it to the use, and the value
    that was live across the statepoint (``use.value`` or one it was derived from).
    """
    if use.incoming is not None:
        block, pos, chain = use.incoming, len(use.incoming.instructions), [use.incoming, use.inst.parent]
    else:
        block = use.inst.parent
        pos, chain = block.instructions.index(use.inst), [block]  # type: ignore[union-attr]
    # Each entry: (value searched for, block, scan from this index downwards, blocks from here to the use)
    queue = deque([(use.value, block, pos, chain)])
    seen: set[tuple[int, BasicBlock]] = set()

    def enqueue_block(value: Value, b: BasicBlock, chain: list[BasicBlock]) -> None:
        if (id(value), b) not in seen:
            seen.add((id(value), b))
            queue.append((value, b, len(b.instructions), [b, *chain]))

    while queue:
        value, block, pos, chain = queue.popleft()
        for k in range(pos - 1, -1, -1):
            inst = block.instructions[k]
            if Statepoint.is_statepoint(inst):
                return inst, chain, value  # type: ignore[return-value]
            if inst is value:
                if av.is_skipped(inst):
                    for w, via in _unavailable_sources(av, inst):
                        if via is None:
                            queue.append((w, block, k, chain))
                        else:
                            enqueue_block(w, via, chain)
                break
        else:
            for p in av.dead.live_predecessors(block):
                if p in av.states:
                    enqueue_block(value, p, chain)
    return None, [], use.value


def _collapse(blocks: list[BasicBlock]) -> list[BasicBlock]:
    out: list[BasicBlock] = []
    for b in blocks:
        if not out or out[-1] is not b:
            out.append(b)
    return out


def _describe(names: LocalNames, inst: I.Instruction) -> str:
    """``'%v = load'`` for an instruction with a result, ``'store'`` otherwise."""
    if inst.type != VOID:
        return f"'{names(inst)} = {inst.opcode}'"
    return f"'{inst.opcode}'"


def find_unrelocated_uses(fn: Function) -> list[UnrelocatedUse]:
    """Every use in ``fn`` of a GC value that is unrelocated or poisoned where it is used.

    Follows LLVM 14's SafepointIRVerifier: one entry per offending operand
    (a value used twice by one instruction is reported twice), blocks in reverse
    post-order, operands in order.  An empty list means the function is clean.
    """
    if fn.is_declaration:
        return []
    dt = DominatorTree(fn)
    dead = Deadness(fn, dt)
    av = Availability(fn, dt, dead)
    names = LocalNames(fn)
    result: list[UnrelocatedUse] = []
    for raw in _raw_violations(fn, av):
        sp, chain, origin = _explain(av, raw)
        path = tuple(names(b) for b in _collapse(chain))
        poisoned = av.is_poisoned(raw.value)
        state = "poisoned" if poisoned else "unrelocated"
        where = f" from {names(raw.incoming)}" if raw.incoming is not None else ""
        if sp is not None:
            line = f" at line {sp.loc[0]}" if sp.loc else ""
            after = f"after statepoint {names(sp)}{line}"
        else:
            after = "after a statepoint"
        derived = f" (derived from '{names(origin)}')" if origin is not raw.value else ""
        text = (f"use of {state} value '{names(raw.value)}'{derived} in {_describe(names, raw.inst)}{where} "
                f"{after} (path: {' -> '.join(path) if path else '?'})")
        result.append(UnrelocatedUse(raw.inst, raw.value, sp, path, text, poisoned, raw.incoming, origin))
    return result


@register("verify-safepoints", options=True)
def verify_safepoints(module: Module, options: str | None = None) -> None:
    """Raise VerifyError listing every unrelocated use in the module, one line per use.

    The error's location is the first use; its message holds that use's text and
    then one full ``file:line:col: error: ...`` line for each further use.
    ``verify-safepoints<print-only>`` (LLVM's ``-safepoint-ir-verifier-print-only``)
    writes LLVM's report of every function to standard error instead and never fails.
    """
    if options is not None:
        if options != "print-only":
            raise VerifyError(f"verify-safepoints takes one option, 'print-only' (got '<{options}>')")
        import sys

        from .safepoint_ir_report import module_report

        sys.stderr.write(module_report(module))
        return
    found = [u for fn in module.definitions() for u in find_unrelocated_uses(fn)]
    if not found:
        return
    filename = getattr(module, "filename", None) or "<input>"
    lines = []
    for k, u in enumerate(found):
        loc = u.location or f"{filename}: @{u.instruction.function.name}"
        lines.append(u.message if k == 0 else f"{loc}: error: {u.message}")
    first = found[0]
    raise VerifyError("\n".join(lines), first.location or f"{filename}: @{first.instruction.function.name}")


register("verify-safepoint-ir", options=True)(verify_safepoints)  # LLVM's legacy pass name


__all__ = ["BaseKind", "BaseKinds", "Deadness", "Availability", "UnrelocatedUse", "base_kind", "find_unrelocated_uses",
           "holds_gc_pointer", "may_move", "verify_safepoints"]
