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

from collections import deque
from dataclasses import dataclass, field

from ..ir import instructions as I
from ..ir.analysis import DominatorTree, LocalNames, reverse_post_order
from ..ir.statepoint import Statepoint, source_location
from ..ir.types import VOID
from ..ir.values import (
    BasicBlock,
    Function,
    Value,
)
from .safepoint_base_kinds import BaseKind, BaseKinds, base_kind, holds_gc_pointer, may_move
from .safepoint_deadness import Deadness


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
        return incoming in self.states and self.dead.is_live_edge(incoming, phi.parent)

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


def _comparison_is_legal(
    av: Availability, available: set[Value], lhs: Value, rhs: Value, kl: BaseKind, kr: BaseKind
) -> bool:
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
        return [
            (w, b)
            for w, b in v.incoming
            if av.phi_edge_is_live(v, b) and av.kinds.may_move(w) and w not in av.states[b].available_out
        ]
    return [
        (w, None)
        for w in v.operands
        if not isinstance(w, BasicBlock) and holds_gc_pointer(w.type) and av.kinds.may_move(w)
    ]


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
        pos, chain = block.instructions.index(use.inst), [block]
    # Each entry: (value searched for, block, scan from this index downwards, blocks from here to the use)
    queue: deque[tuple[Value, BasicBlock, int, list[BasicBlock]]] = deque([(use.value, block, pos, chain)])
    seen: set[tuple[int, BasicBlock]] = set()

    def enqueue_block(value: Value, b: BasicBlock, chain: list[BasicBlock]) -> None:
        if (id(value), b) not in seen:
            seen.add((id(value), b))
            queue.append((value, b, len(b.instructions), [b, *chain]))

    while queue:
        value, block, pos, chain = queue.popleft()
        for k in range(pos - 1, -1, -1):
            inst: I.Instruction = block.instructions[k]
            if isinstance(inst, I.CallBase) and Statepoint.is_statepoint(inst):
                return inst, chain, value
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
        text = (
            f"use of {state} value '{names(raw.value)}'{derived} in {_describe(names, raw.inst)}{where} "
            f"{after} (path: {' -> '.join(path) if path else '?'})"
        )
        result.append(UnrelocatedUse(raw.inst, raw.value, sp, path, text, poisoned, raw.incoming, origin))
    return result


__all__ = [
    "BaseKind",
    "BaseKinds",
    "Deadness",
    "Availability",
    "UnrelocatedUse",
    "base_kind",
    "find_unrelocated_uses",
    "holds_gc_pointer",
    "may_move",
]
