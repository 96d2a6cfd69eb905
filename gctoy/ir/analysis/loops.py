"""Natural loops: backedges, loop bodies, latches, exits and how loops nest.

A *backedge* is an edge whose target dominates its source; the target is the
loop *header*.  The natural loop of a header is the header plus every block
that reaches one of its backedges' sources (the *latches*) without passing
through the header.  All backedges into one header make one loop, as in LLVM.

Cycles entered at more than one block (irreducible control flow) have no
dominating header, so they are not natural loops and are not reported;
:func:`is_reducible` tells whether a function has any.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..values import BasicBlock, Function
from .cfg import Edge, edges, retreating_edges
from .dominators import DominatorTree
from .numbering import LocalNames


@dataclass(eq=False)
class Loop:
    """A natural loop: one header that dominates every block of the body."""

    header: BasicBlock
    #: Every block of the loop (nested loops' blocks included), in function order.
    blocks: list[BasicBlock]
    #: Blocks with a backedge to the header.
    latches: list[BasicBlock]
    #: Blocks of the loop with a successor outside it.
    exiting: list[BasicBlock]
    #: Blocks outside the loop that a block of the loop branches to.
    exits: list[BasicBlock]
    parent: "Loop | None" = field(default=None, repr=False)
    children: list["Loop"] = field(default_factory=list, repr=False)
    _members: frozenset = field(init=False, repr=False, default=frozenset())

    def __post_init__(self) -> None:
        self._members = frozenset(self.blocks)

    def contains(self, block: BasicBlock) -> bool:
        """True if ``block`` belongs to the loop (or to a loop nested in it)."""
        return block in self._members

    def __contains__(self, block: object) -> bool:
        return block in self._members

    def __len__(self) -> int:
        return len(self.blocks)

    @property
    def depth(self) -> int:
        """Nesting depth: 1 for an outermost loop."""
        d, loop = 1, self.parent
        while loop is not None:
            d, loop = d + 1, loop.parent
        return d


def backedges(fn: Function, dt: DominatorTree | None = None) -> list[Edge]:
    """Reachable edges whose target dominates their source, in edge order."""
    dt = dt or DominatorTree(fn)
    return [e for e in edges(fn) if dt.is_reachable(e.source) and dt.dominates(e.target, e.source)]


def is_reducible(fn: Function, dt: DominatorTree | None = None) -> bool:
    """True if every cycle is a natural loop (each edge closing a cycle is a backedge)."""
    dt = dt or DominatorTree(fn)
    return all(dt.dominates(e.target, e.source) for e in retreating_edges(fn))


class LoopInfo:
    """All natural loops of a function and the nesting forest they form."""

    def __init__(self, fn: Function, dt: DominatorTree | None = None) -> None:
        self.function = fn
        self.dominators = dt = dt or DominatorTree(fn)
        self.backedges = backedges(fn, dt)
        order = {b: i for i, b in enumerate(fn.blocks)}
        latches: dict[BasicBlock, list[BasicBlock]] = {}
        for e in self.backedges:
            latches.setdefault(e.target, []).append(e.source)
        found = [self._natural_loop(h, ls, order) for h, ls in latches.items()]
        # Bodies of distinct headers are nested or disjoint: visiting big loops
        # first, the innermost loop seen so far around a header is its parent.
        found.sort(key=lambda lp: (-len(lp.blocks), order[lp.header]))
        self._innermost: dict[BasicBlock, Loop] = {}
        for loop in found:
            loop.parent = self._innermost.get(loop.header)
            if loop.parent is not None:
                loop.parent.children.append(loop)
            for b in loop.blocks:
                self._innermost[b] = loop
        for loop in found:
            loop.children.sort(key=lambda lp: order[lp.header])
        self.top_level: list[Loop] = sorted((lp for lp in found if lp.parent is None), key=lambda lp: order[lp.header])
        self.loops: list[Loop] = []
        stack = list(reversed(self.top_level))
        while stack:
            loop = stack.pop()
            self.loops.append(loop)
            stack.extend(reversed(loop.children))

    def _natural_loop(self, header: BasicBlock, latches: list[BasicBlock], order: dict) -> Loop:
        preds = self.dominators.predecessors
        body = {header}
        work = []
        for latch in latches:
            if latch not in body:
                body.add(latch)
                work.append(latch)
        while work:
            for p in preds[work.pop()]:
                if p not in body and self.dominators.is_reachable(p):
                    body.add(p)
                    work.append(p)
        blocks = sorted(body, key=order.__getitem__)
        exiting: list[BasicBlock] = []
        exits: list[BasicBlock] = []
        for b in blocks:
            outside = [s for s in b.successors if s not in body]
            if outside:
                exiting.append(b)
                exits.extend(s for s in outside if s not in exits)
        exits.sort(key=order.__getitem__)
        return Loop(header, blocks, sorted(latches, key=order.__getitem__), exiting, exits)

    def loop_for(self, block: BasicBlock) -> Loop | None:
        """The innermost loop containing ``block``, if any."""
        return self._innermost.get(block)

    def depth(self, block: BasicBlock) -> int:
        """How many loops contain ``block`` (0 outside every loop)."""
        loop = self._innermost.get(block)
        return 0 if loop is None else loop.depth

    def is_header(self, block: BasicBlock) -> bool:
        """True if ``block`` heads a loop."""
        loop = self._innermost.get(block)
        return loop is not None and loop.header is block

    def render(self) -> str:
        """One line per loop, indented by nesting: header, blocks, latches, exits."""
        names = LocalNames(self.function)
        lines = [f"loops of @{self.function.name}"]
        if not self.loops:
            lines.append("  (none)")
        for loop in self.loops:
            lines.append(
                "  " * loop.depth
                + f"loop {names(loop.header)}: blocks {names.join(loop.blocks)};"
                + f" latches {names.join(loop.latches)};"
                + f" exits {names.join(loop.exits) or '-'}"
            )
        return "\n".join(lines) + "\n"


def natural_loops(fn: Function, dt: DominatorTree | None = None) -> list[Loop]:
    """Every natural loop, outer loops before the loops they contain."""
    return LoopInfo(fn, dt).loops
