"""Liveness of SSA values: which definitions may still be read later on some path.

A value is *live* at a point if some path from that point reaches a use of it
without passing its definition again.  The classic backward dataflow problem,
per block ``B``::

    live_out(B) = union over successors S of ( live_in(S) + phi_uses(B -> S) )
    live_in(B)  = upward_uses(B) + ( live_out(B) - defs(B) )

Phis follow SSA's edge semantics: ``phi [ %v, %P ]`` reads ``%v`` at the end of
``%P`` (so ``%v`` is live-out of ``%P``, not live-in of the phi's block), and
every phi of a block defines its result at the very start of the block, all at
once.  Only arguments and instructions are tracked; constants and globals are
never live.

Sets are Python ints used as bitsets over the function's value numbering (see
:mod:`.numbering`), and a worklist revisits a block only when a successor's
live-in set grew, so large functions stay fast.  Everything handed back to
callers is a tuple in definition order.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator, Mapping

from ...errors import GCToyError
from ..instructions import Instruction, Phi
from ..types import is_gc_pointer
from ..values import BasicBlock, Function, Value
from .cfg import post_order, require_body
from .numbering import LocalNames, ValueNumbering


class BlockLiveSets(Mapping):
    """A read-only ``block -> tuple of live values`` view over per-block bitsets."""

    def __init__(self, blocks: list[BasicBlock], bits: list[int], numbering: ValueNumbering) -> None:
        self._index = {b: i for i, b in enumerate(blocks)}
        self._blocks = blocks
        self._bits = bits
        self._numbering = numbering

    def __getitem__(self, block: BasicBlock) -> tuple[Value, ...]:
        return self._numbering.decode(self._bits[self._index[block]])

    def __iter__(self) -> Iterator[BasicBlock]:
        return iter(self._blocks)

    def __len__(self) -> int:
        return len(self._blocks)

    def bits(self, block: BasicBlock) -> int:
        """The raw bitset of ``block``."""
        return self._bits[self._index[block]]


class Liveness:
    """Live values at block boundaries and around every instruction of one function."""

    def __init__(self, fn: Function, gc_only: bool = False) -> None:
        require_body(fn)
        self.function = fn
        self.gc_only = gc_only
        self.numbering = ValueNumbering(fn, (lambda v: is_gc_pointer(v.type)) if gc_only else None)
        self._blocks = list(fn.blocks)
        self._block_index = {b: i for i, b in enumerate(self._blocks)}
        self._scan_blocks()
        self._solve()
        self.live_in = BlockLiveSets(self._blocks, self._in, self.numbering)
        self.live_out = BlockLiveSets(self._blocks, self._out, self.numbering)
        self._cached_block: BasicBlock | None = None
        self._cached_points: dict[int, tuple[int, int]] = {}

    # -- the dataflow problem ---------------------------------------------------
    def _scan_blocks(self) -> None:
        numbering, index = self.numbering, self._block_index
        n = len(self._blocks)
        self._gen = [0] * n  # read in the block before any definition there
        self._kill = [0] * n  # defined in the block (phis included)
        self._edge_uses: dict[tuple[int, int], int] = {}  # (pred, block) -> phi operands on that edge
        self._succ = [[index[s] for s in b.successors if s in index] for b in self._blocks]
        self._pred: list[list[int]] = [[] for _ in range(n)]
        for i, succs in enumerate(self._succ):
            for s in succs:
                self._pred[s].append(i)
        for i, block in enumerate(self._blocks):
            live = 0
            kill = 0
            for inst in reversed(block.instructions):
                bit = numbering.bit(inst)
                if bit:
                    kill |= bit
                    live &= ~bit
                if isinstance(inst, Phi):
                    for v, pred in inst.incoming:
                        p = index.get(pred)
                        used = numbering.bit(v)
                        if p is not None and used:
                            key = (p, i)
                            self._edge_uses[key] = self._edge_uses.get(key, 0) | used
                else:
                    live |= numbering.bits(inst.operands)
            self._gen[i] = live
            self._kill[i] = kill
        # Phi operands only count on real edges: a stale incoming block is ignored.
        self._phi_out = [0] * n
        for (p, i), used in self._edge_uses.items():
            if i in self._succ[p]:
                self._phi_out[p] |= used

    def _solve(self) -> None:
        n = len(self._blocks)
        live_in = [0] * n
        live_out = [0] * n
        succ, pred, gen, kill, phi_out = self._succ, self._pred, self._gen, self._kill, self._phi_out
        index = self._block_index
        order = [index[b] for b in post_order(self.function)]
        seen = set(order)
        order += [i for i in range(n) if i not in seen]
        queued = [True] * n
        work = deque(order)
        while work:
            i = work.popleft()
            queued[i] = False
            out = phi_out[i]
            for s in succ[i]:
                out |= live_in[s]
            live_out[i] = out
            new_in = gen[i] | (out & ~kill[i])
            if new_in != live_in[i]:
                live_in[i] = new_in
                for p in pred[i]:
                    if not queued[p]:
                        queued[p] = True
                        work.append(p)
        self._in = live_in
        self._out = live_out

    # -- points inside blocks ---------------------------------------------------
    def _points(self, inst: Instruction) -> tuple[int, int]:
        block = inst.parent
        if block is None or block not in self._block_index:
            raise GCToyError("liveness: the instruction is not in the analysed function")
        if block is not self._cached_block:
            self._cached_points = self._scan_points(block)
            self._cached_block = block
        points = self._cached_points.get(id(inst))
        if points is None:
            raise GCToyError("liveness: instruction not found (the function changed after analysis)")
        return points

    def _scan_points(self, block: BasicBlock) -> dict[int, tuple[int, int]]:
        numbering = self.numbering
        i = self._block_index[block]
        insts = block.instructions
        leading = len(block.phis())
        points: dict[int, tuple[int, int]] = {}
        live = self._out[i]
        for inst in reversed(insts[leading:]):
            after = live
            bit = numbering.bit(inst)
            if bit:
                live &= ~bit
            if not isinstance(inst, Phi):
                live |= numbering.bits(inst.operands)
            points[id(inst)] = (live, after)
        # The leading phis act together on entry: before them only live_in, after them
        # whatever the first ordinary instruction needs (phi results included).
        for phi in insts[:leading]:
            points[id(phi)] = (self._in[i], live)
        return points

    def bits_before(self, inst: Instruction) -> int:
        """The live set just before ``inst`` as a bitset over ``self.numbering``."""
        return self._points(inst)[0]

    def bits_after(self, inst: Instruction) -> int:
        """The live set just after ``inst`` as a bitset over ``self.numbering``."""
        return self._points(inst)[1]

    def live_before(self, inst: Instruction) -> tuple[Value, ...]:
        """Values live just before ``inst`` runs (its operands included); for a phi, the block's live-in."""
        return self.numbering.decode(self._points(inst)[0])

    def live_after(self, inst: Instruction) -> tuple[Value, ...]:
        """Values live just after ``inst`` (its own result if read later); for a terminator, the live-out."""
        return self.numbering.decode(self._points(inst)[1])

    def live_across(self, call: Instruction) -> tuple[Value, ...]:
        """Values that must survive ``call``: live after it, not counting its own result."""
        return self.numbering.decode(self._points(call)[1] & ~self.numbering.bit(call))

    def is_live_in(self, value: Value, block: BasicBlock) -> bool:
        """True if ``value`` is live on entry to ``block``."""
        return bool(self.live_in.bits(block) & self.numbering.bit(value))

    def is_live_out(self, value: Value, block: BasicBlock) -> bool:
        """True if ``value`` is live on exit from ``block``."""
        return bool(self.live_out.bits(block) & self.numbering.bit(value))

    # -- presentation ---------------------------------------------------------
    def render(self) -> str:
        """Live-in and live-out of every block, one block per line pair."""
        names = LocalNames(self.function)
        kind = "GC pointer liveness" if self.gc_only else "liveness"
        lines = [f"{kind} of @{self.function.name}"]
        for b in self._blocks:
            lines.append(f"{names(b)}:")
            lines.append(f"  in:  {names.join(self.live_in[b]) or '-'}")
            lines.append(f"  out: {names.join(self.live_out[b]) or '-'}")
        return "\n".join(lines) + "\n"
