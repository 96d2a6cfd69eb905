"""The control-flow graph of a function: edges, predecessors, traversal orders, reachability.

Blocks are the nodes and a terminator's distinct targets are the out-edges
(``br i1 %c, label %a, label %a`` is one edge, as ``BasicBlock.successors``
already says).  Every order returned here is deterministic: function order
for "all blocks" lists, depth-first order following terminator operand order
for traversals.
"""

from __future__ import annotations

from typing import NamedTuple

from ...errors import GCToyError
from ..values import BasicBlock, Function


class Edge(NamedTuple):
    """A control-flow edge ``source -> target``."""

    source: BasicBlock
    target: BasicBlock


def require_body(fn: Function) -> None:
    """Raise GCToyError for a declaration: analyses need blocks."""
    if fn.is_declaration:
        raise GCToyError(f"cannot analyse '@{fn.name}': it is a declaration without a body")


def edges(fn: Function) -> list[Edge]:
    """Every edge, grouped by source block in function order, targets in terminator order."""
    return [Edge(b, s) for b in fn.blocks for s in b.successors]


def predecessors(fn: Function) -> dict[BasicBlock, list[BasicBlock]]:
    """Each block's distinct predecessors, in function order (unreachable ones included)."""
    preds: dict[BasicBlock, list[BasicBlock]] = {b: [] for b in fn.blocks}
    for b in fn.blocks:
        for s in b.successors:
            if s in preds:
                preds[s].append(b)
    return preds


def post_order(fn: Function) -> list[BasicBlock]:
    """Blocks reachable from the entry, each after all the successors its DFS visited."""
    require_body(fn)
    entry = fn.blocks[0]
    order: list[BasicBlock] = []
    seen = {entry}
    # Iterative DFS: each frame is (block, iterator over its successors).
    stack = [(entry, iter(entry.successors))]
    while stack:
        block, succs = stack[-1]
        for s in succs:
            if s not in seen:
                seen.add(s)
                stack.append((s, iter(s.successors)))
                break
        else:
            stack.pop()
            order.append(block)
    return order


def reverse_post_order(fn: Function) -> list[BasicBlock]:
    """Reachable blocks in reverse post-order: the entry first, a block before its DFS descendants."""
    order = post_order(fn)
    order.reverse()
    return order


def reachable_set(fn: Function) -> set[BasicBlock]:
    """The set of blocks reachable from the entry (for membership tests)."""
    require_body(fn)
    entry = fn.blocks[0]
    seen = {entry}
    work = [entry]
    while work:
        for s in work.pop().successors:
            if s not in seen:
                seen.add(s)
                work.append(s)
    return seen


def reachable_blocks(fn: Function) -> list[BasicBlock]:
    """Blocks reachable from the entry, in function order."""
    seen = reachable_set(fn)
    return [b for b in fn.blocks if b in seen]


def unreachable_blocks(fn: Function) -> list[BasicBlock]:
    """Blocks no path from the entry reaches, in function order."""
    seen = reachable_set(fn)
    return [b for b in fn.blocks if b not in seen]


def critical_edges(fn: Function) -> list[Edge]:
    """Edges from a block with several successors to a block with several predecessors.

    Such an edge has no block of its own where code could be placed; passes that
    need one (to insert a relocation or a copy) must split it first.  Invoke edges
    count too, although splitting an unwind edge needs a new landing pad.
    """
    preds = predecessors(fn)
    return [e for e in edges(fn) if len(e.source.successors) > 1 and len(preds[e.target]) > 1]


def retreating_edges(fn: Function) -> list[Edge]:
    """Reachable edges whose target is an ancestor on the DFS stack (the edges that close cycles)."""
    require_body(fn)
    entry = fn.blocks[0]
    on_stack = {entry}
    seen = {entry}
    found: set[tuple[int, int]] = set()
    stack = [(entry, iter(entry.successors))]
    while stack:
        block, succs = stack[-1]
        for s in succs:
            if s in on_stack:
                found.add((id(block), id(s)))
            elif s not in seen:
                seen.add(s)
                on_stack.add(s)
                stack.append((s, iter(s.successors)))
                break
        else:
            stack.pop()
            on_stack.discard(block)
    return [e for e in edges(fn) if (id(e.source), id(e.target)) in found]
