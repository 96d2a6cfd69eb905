"""Dominator trees: which blocks (and definitions) every path from the entry must pass through.

Block ``A`` dominates block ``B`` when every path from the entry to ``B`` goes
through ``A``.  The tree is built with the iterative algorithm of Cooper, Harvey
and Kennedy ("A Simple, Fast Dominance Algorithm", 2001): walk the reachable
blocks in reverse post-order and set each block's immediate dominator to the
meeting point of its already-processed predecessors, until nothing changes.
Irreducible control flow only costs extra sweeps.

Conventions follow LLVM: a block unreachable from the entry has no immediate
dominator, is dominated by every block, and dominates nothing reachable.
"""

from __future__ import annotations

from ...errors import GCToyError
from ..instructions import Instruction, Invoke, Phi
from ..values import BasicBlock, Function, Value
from .cfg import predecessors, require_body, reverse_post_order
from .numbering import LocalNames


class DominatorTree:
    """The dominator tree of one function, with block, edge and definition-use queries."""

    def __init__(self, fn: Function) -> None:
        require_body(fn)
        self.function = fn
        self.rpo: list[BasicBlock] = reverse_post_order(fn)
        self.predecessors = predecessors(fn)
        self._rpo_index = {b: i for i, b in enumerate(self.rpo)}
        self._idom = self._solve()
        self._block_order = {b: i for i, b in enumerate(fn.blocks)}
        self._children: dict[BasicBlock, list[BasicBlock]] = {b: [] for b in fn.blocks}
        for b in fn.blocks:
            parent = self._idom.get(b)
            if parent is not None:
                self._children[parent].append(b)
        self._number_tree()
        self._frontier: dict[BasicBlock, list[BasicBlock]] | None = None
        self._instruction_index: dict[int, int] | None = None

    # -- construction -----------------------------------------------------------
    def _solve(self) -> dict[BasicBlock, BasicBlock | None]:
        rpo = self.rpo
        index = self._rpo_index
        preds = [[index[p] for p in self.predecessors[b] if p in index] for b in rpo]
        idom = [-1] * len(rpo)
        idom[0] = 0

        def intersect(a: int, b: int) -> int:
            # Climb from the deeper finger (larger RPO number) until both meet.
            while a != b:
                while a > b:
                    a = idom[a]
                while b > a:
                    b = idom[b]
            return a

        changed = True
        while changed:
            changed = False
            for i in range(1, len(rpo)):
                new = -1
                for p in preds[i]:
                    if idom[p] == -1:
                        continue
                    new = p if new == -1 else intersect(p, new)
                if idom[i] != new:
                    idom[i] = new
                    changed = True
        result: dict[BasicBlock, BasicBlock | None] = {rpo[0]: None}
        for i in range(1, len(rpo)):
            result[rpo[i]] = rpo[idom[i]]
        return result

    def _number_tree(self) -> None:
        # Pre-order entry/exit numbers make `dominates` a constant-time interval test.
        self._enter: dict[BasicBlock, int] = {}
        self._exit: dict[BasicBlock, int] = {}
        self._depth: dict[BasicBlock, int] = {}
        root = self.rpo[0]
        clock = 0
        self._enter[root] = clock
        self._depth[root] = 0
        stack = [(root, iter(self._children[root]))]
        while stack:
            block, kids = stack[-1]
            child = next(kids, None)
            if child is None:
                stack.pop()
                clock += 1
                self._exit[block] = clock
            else:
                clock += 1
                self._enter[child] = clock
                self._depth[child] = self._depth[block] + 1
                stack.append((child, iter(self._children[child])))

    # -- block queries ----------------------------------------------------------
    @property
    def root(self) -> BasicBlock:
        """The entry block."""
        return self.rpo[0]

    def is_reachable(self, block: BasicBlock) -> bool:
        """True if a path from the entry reaches ``block``."""
        self._check(block)
        return block in self._rpo_index

    def idom(self, block: BasicBlock) -> BasicBlock | None:
        """The immediate dominator; None for the entry and for unreachable blocks."""
        self._check(block)
        return self._idom.get(block)

    def depth(self, block: BasicBlock) -> int | None:
        """The block's depth in the tree (entry 0), None when unreachable."""
        self._check(block)
        return self._depth.get(block)

    def children(self, block: BasicBlock) -> list[BasicBlock]:
        """The blocks ``block`` immediately dominates, in function order."""
        self._check(block)
        return list(self._children[block])

    def dominates(self, a: BasicBlock, b: BasicBlock) -> bool:
        """True if every path from the entry to ``b`` passes ``a`` (reflexive)."""
        self._check(a)
        self._check(b)
        if b not in self._enter:
            return True
        if a not in self._enter:
            return False
        return self._enter[a] <= self._enter[b] and self._exit[b] <= self._exit[a]

    def strictly_dominates(self, a: BasicBlock, b: BasicBlock) -> bool:
        """``dominates(a, b)`` and ``a`` is not ``b``."""
        return a is not b and self.dominates(a, b)

    def nearest_common_dominator(self, a: BasicBlock, b: BasicBlock) -> BasicBlock | None:
        """The deepest block dominating both (None if either is unreachable)."""
        if not (self.is_reachable(a) and self.is_reachable(b)):
            return None
        while not self.dominates(a, b):
            a = self._idom[a]  # type: ignore[assignment]
        return a

    def dominance_frontier(self, block: BasicBlock) -> list[BasicBlock]:
        """Blocks where ``block``'s dominance ends: it dominates a predecessor but not strictly the block."""
        self._check(block)
        if self._frontier is None:
            self._frontier = self._compute_frontiers()
        return list(self._frontier[block])

    def _compute_frontiers(self) -> dict[BasicBlock, list[BasicBlock]]:
        found: dict[BasicBlock, set[BasicBlock]] = {b: set() for b in self.function.blocks}
        for b in self.rpo:
            stop = self._idom[b]
            for p in self.predecessors[b]:
                if p not in self._rpo_index:
                    continue
                runner: BasicBlock | None = p
                while runner is not None and runner is not stop:
                    found[runner].add(b)
                    runner = self._idom[runner]
        order = self._block_order
        return {b: sorted(s, key=order.__getitem__) for b, s in found.items()}

    # -- edges and definitions --------------------------------------------------
    def dominates_edge(self, source: BasicBlock, target: BasicBlock, block: BasicBlock) -> bool:
        """True if every path from the entry to ``block`` takes the edge ``source -> target``.

        Think of the edge as split by a new block: it dominates ``block`` iff
        ``target`` does and every other predecessor of ``target`` is itself
        dominated by ``target`` (reached only by going round through it).  A
        terminator naming ``target`` twice gives two parallel edges, neither of
        which dominates anything reachable.
        """
        self._check(source)
        self._check(target)
        if source.terminator is None or target not in source.terminator.successors:
            raise GCToyError("dominates_edge: the two blocks are not joined by an edge")
        if not self.is_reachable(block):
            return True
        if target is self.root or not self.dominates(target, block):
            # A path from the entry never needs to re-enter the entry block.
            return False
        if sum(1 for s in source.terminator.successors if s is target) > 1:
            return False
        return all(p is source or self.dominates(target, p) for p in self.predecessors[target])

    def dominates_use(
        self, definition: Value, user: Instruction, operand_block_for_phi: BasicBlock | None = None
    ) -> bool:
        """True if ``definition`` is available wherever ``user`` reads it.

        Arguments and constants are available everywhere.  Inside one block the
        definition must come first.  A phi reads its operand at the end of the
        incoming block (``operand_block_for_phi``; when omitted, every incoming
        entry carrying ``definition`` must be dominated).  An invoke's result
        exists only on the edge to its normal destination.  A use in an
        unreachable block is dominated by anything.
        """
        if not isinstance(definition, Instruction):
            return True
        if user.parent is None or user.parent.parent is not self.function:
            raise GCToyError("dominates_use: the user is not an instruction of this function")
        if definition.parent is None or definition.parent.parent is not self.function:
            raise GCToyError("dominates_use: the definition is not an instruction of this function")
        if isinstance(user, Phi):
            if operand_block_for_phi is not None:
                return self._dominates_phi_use(definition, user, operand_block_for_phi)
            blocks = [b for v, b in user.incoming if v is definition]
            if not blocks:
                raise GCToyError("dominates_use: the definition is not an incoming value of the phi")
            return all(self._dominates_phi_use(definition, user, b) for b in blocks)
        use_block = user.parent
        def_block = definition.parent
        if not self.is_reachable(use_block):
            return True
        if not self.is_reachable(def_block):
            return False
        if isinstance(definition, Invoke):
            return self.dominates_edge(def_block, definition.normal, use_block)
        if def_block is not use_block:
            return self.dominates(def_block, use_block)
        return self._position(definition) < self._position(user)

    def _dominates_phi_use(self, definition: Instruction, phi: Phi, incoming: BasicBlock) -> bool:
        if not self.is_reachable(incoming):
            return True
        def_block = definition.parent
        if not self.is_reachable(def_block):
            return False
        if isinstance(definition, Invoke):
            if phi.parent is definition.normal and incoming is def_block:
                return True
            return self.dominates_edge(def_block, definition.normal, incoming)
        return self.dominates(def_block, incoming)

    def _position(self, inst: Instruction) -> int:
        if self._instruction_index is None:
            self._instruction_index = {}
            for b in self.function.blocks:
                for i, x in enumerate(b.instructions):
                    self._instruction_index[id(x)] = i
        pos = self._instruction_index.get(id(inst))
        if pos is None:
            raise GCToyError("dominates_use: instruction not found (the function changed after analysis)")
        return pos

    def _check(self, block: BasicBlock) -> None:
        if block not in self._block_order:
            raise GCToyError(f"block {block} is not in '@{self.function.name}'")

    # -- presentation ---------------------------------------------------------
    def render(self) -> str:
        """The tree as indented text, children in function order, then the unreachable blocks."""
        names = LocalNames(self.function)
        lines = [f"dominator tree of @{self.function.name}"]
        stack = [self.root]
        while stack:
            block = stack.pop()
            lines.append("  " * (self._depth[block] + 1) + names(block))
            stack.extend(reversed(self._children[block]))
        dead = [b for b in self.function.blocks if b not in self._rpo_index]
        if dead:
            lines.append("unreachable: " + names.join(dead))
        return "\n".join(lines) + "\n"
