"""gctoy.ir.analysis: control flow, dominators, loops, liveness and def-use chains of one function."""

from .cfg import (
    Edge,
    critical_edges,
    edges,
    post_order,
    predecessors,
    reachable_blocks,
    retreating_edges,
    reverse_post_order,
    unreachable_blocks,
)
from .defuse import Use, users, users_of, uses_of
from .dominators import DominatorTree
from .liveness import BlockLiveSets, Liveness
from .loops import Loop, LoopInfo, backedges, is_reducible, natural_loops
from .numbering import LocalNames, ValueNumbering

__all__ = [
    "BlockLiveSets",
    "DominatorTree",
    "Edge",
    "Liveness",
    "LocalNames",
    "Loop",
    "LoopInfo",
    "Use",
    "ValueNumbering",
    "backedges",
    "critical_edges",
    "edges",
    "is_reducible",
    "natural_loops",
    "post_order",
    "predecessors",
    "reachable_blocks",
    "retreating_edges",
    "reverse_post_order",
    "unreachable_blocks",
    "users",
    "users_of",
    "uses_of",
]
