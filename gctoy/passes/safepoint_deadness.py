"""Blocks and edges that never run, as LLVM's SafepointIRVerifier finds them (its ``CFGDeadness``).

Unreachable blocks, and whatever a conditional branch on a constant ``i1`` cuts off: an edge
not taken, then every block left without a live incoming edge, with all it dominates.
"""

from __future__ import annotations

from ..ir import instructions as I
from ..ir.analysis import DominatorTree, reverse_post_order
from ..ir.values import BasicBlock, ConstantInt, Function


class Deadness:
    """Blocks and edges that never run: unreachable blocks, and what ``br i1 <constant>`` cuts off.

    An edge is a (source, target) pair.  A block is dead when every edge into it is
    dead or comes from a dead block; then every block it dominates is dead too, and
    the blocks those reach may become dead in turn.
    """

    def __init__(self, fn: Function, dt: DominatorTree) -> None:
        self.function = fn
        self.dt = dt
        self.preds: dict[BasicBlock, list[BasicBlock]] = {b: [] for b in fn.blocks}
        for b in fn.blocks:
            term = b.terminator
            for s in term.successors if term is not None else []:
                if s in self.preds:
                    self.preds[s].append(b)  # one entry per edge, as LLVM's predecessor list
        self.dead_blocks: set[BasicBlock] = {b for b in fn.blocks if not dt.is_reachable(b)}
        self.dead_edges: set[tuple[BasicBlock, BasicBlock]] = set()
        for b in reverse_post_order(fn):
            term = b.terminator
            if not (isinstance(term, I.Br) and term.is_conditional):
                continue
            on_true, on_false = term.ops[1], term.ops[2]
            if on_true is on_false or not isinstance(term.condition, ConstantInt):
                continue
            untaken = on_false if term.condition.value else on_true
            assert isinstance(untaken, BasicBlock)
            self._add_dead_edge(b, untaken)

    def is_dead_block(self, block: BasicBlock) -> bool:
        """True if ``block`` can never run."""
        return block in self.dead_blocks

    def is_dead_edge(self, source: BasicBlock, target: BasicBlock) -> bool:
        """True if control never flows along ``source -> target`` (for a live ``source``)."""
        return (source, target) in self.dead_edges

    def is_live_edge(self, source: BasicBlock, target: BasicBlock) -> bool:
        """True if ``source`` is live and the edge is not cut off."""
        return not self.is_dead_block(source) and not self.is_dead_edge(source, target)

    def has_live_incoming_edge(self, block: BasicBlock) -> bool:
        """True if some live block reaches ``block`` along a live edge."""
        return any(self.is_live_edge(p, block) for p in self.preds.get(block, []))

    def live_predecessors(self, block: BasicBlock) -> list[BasicBlock]:
        """Distinct predecessors joined to ``block`` by a live edge, in function order."""
        out: list[BasicBlock] = []
        for p in self.preds.get(block, []):
            if p not in out and self.is_live_edge(p, block):
                out.append(p)
        return out

    def _add_dead_edge(self, source: BasicBlock, target: BasicBlock) -> None:
        if (source, target) in self.dead_edges:
            return
        self.dead_edges.add((source, target))
        if not self.has_live_incoming_edge(target):
            self._add_dead_block(target)

    def _add_dead_block(self, block: BasicBlock) -> None:
        pending = [block]
        while pending:
            d = pending.pop()
            if d in self.dead_blocks:
                continue
            dominated = self._dominated_by(d)
            self.dead_blocks.update(dominated)
            for b in dominated:
                for s in b.successors:
                    if s not in self.dead_blocks and not self.has_live_incoming_edge(s):
                        pending.append(s)

    def _dominated_by(self, block: BasicBlock) -> list[BasicBlock]:
        out, stack = [], [block]
        while stack:
            b = stack.pop()
            out.append(b)
            stack.extend(self.dt.children(b))
        return out


__all__ = ["Deadness"]
