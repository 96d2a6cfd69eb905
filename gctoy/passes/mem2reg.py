"""Promote allocas to SSA values (the classic mem2reg), used by RS4GC's use rewriting.

For each promotable alloca (only loaded and stored, never escaping):

1. the blocks where it is *live in* (a load before any store in the block,
   then backwards through predecessors that do not store) — phis go only there
   (pruned SSA);
2. phis at the iterated dominance frontier of the storing blocks, restricted
   to those live-in blocks, visited in function order and named
   ``<alloca name>.<version>`` (``.0``, ``.1``... for an unnamed alloca); each
   new phi goes to the top of its block;
3. a depth-first walk of the CFG carrying the current value of every alloca
   (LLVM's order: the first successor at once, the others on a stack): a
   store sets it, a load is replaced by it, and each time the walk enters a
   block its phis receive the values flowing along that edge.  Before any
   store the value is ``undef``;
4. phis whose incoming values are all one value (besides themselves) are
   replaced by it, until none is left.

The orders above are LLVM's, so that names and phi operands come out as
``opt`` prints them.
"""
from __future__ import annotations

from ..ir import instructions as I
from ..ir.analysis import DominatorTree, predecessors
from ..ir.values import Argument, BasicBlock, Constant, Function, Undef, Value
from .naming import NameUniquer


def is_promotable(alloca: I.Alloca, users: list[I.Instruction]) -> bool:
    """Only loads of it and stores *to* it (not of it) use the alloca."""
    for u in users:
        if isinstance(u, I.Load) and u.pointer is alloca:
            continue
        if isinstance(u, I.Store) and u.pointer is alloca and u.value is not alloca:
            continue
        return False
    return alloca.count is None


def _phi_order(fn: Function, allocas: list[I.Alloca], index: dict[int, int], dt: DominatorTree) -> list[int]:
    """The order in which LLVM's mem2reg places the phis of ``allocas`` (indexes into the list).

    LLVM promotes an alloca with no use, one with a single store that dominates every load, and one
    used in a single block where no load comes before a store at once (they need no phi) and takes
    it off its list by moving the *last* alloca into its place: the allocas left are then visited in
    that shuffled order, which decides which phi is ``.0`` and which ``.01``."""
    stores: list[list[tuple[BasicBlock, int]]] = [[] for _ in allocas]
    loads: list[list[tuple[BasicBlock, int]]] = [[] for _ in allocas]
    for b in fn.blocks:
        for n, inst in enumerate(b.instructions):
            if isinstance(inst, I.Store) and id(inst.pointer) in index:
                stores[index[id(inst.pointer)]].append((b, n))
            elif isinstance(inst, I.Load) and id(inst.pointer) in index:
                loads[index[id(inst.pointer)]].append((b, n))

    def needs_no_phi(k: int) -> bool:
        st, ld = stores[k], loads[k]
        if len(st) == 1:
            (sb, sn), = st
            if all((b is sb and n > sn) or (b is not sb and dt.dominates(sb, b)) for b, n in ld):
                return True
        blocks = {id(b) for b, _ in st + ld}
        if len(blocks) <= 1:
            first = min((n for _, n in st), default=None)
            return first is None or all(n > first for _, n in ld)
        return False

    order = list(range(len(allocas)))
    i = 0
    while i < len(order):
        if needs_no_phi(order[i]):
            order[i] = order[-1]
            order.pop()
        else:
            i += 1
    return order


def promote(fn: Function, allocas: list[I.Alloca], names: NameUniquer | None = None) -> list[I.Phi]:
    """Promote ``allocas`` of ``fn`` (all must be promotable); returns the phis that remain."""
    if not allocas:
        return []
    names = names or NameUniquer(fn)
    index = {id(a): k for k, a in enumerate(allocas)}
    order = {id(b): n for n, b in enumerate(fn.blocks)}
    dt = DominatorTree(fn)
    preds = predecessors(fn)
    def_blocks: list[list[BasicBlock]] = [[] for _ in allocas]
    use_blocks: list[list[BasicBlock]] = [[] for _ in allocas]
    for b in fn.blocks:
        stored: set[int] = set()
        for inst in b.instructions:
            if isinstance(inst, I.Store) and id(inst.pointer) in index:
                k = index[id(inst.pointer)]
                if k not in stored:
                    def_blocks[k].append(b)
                stored.add(k)
            elif isinstance(inst, I.Load) and id(inst.pointer) in index:
                k = index[id(inst.pointer)]
                if k not in stored and all(x is not b for x in use_blocks[k]):
                    use_blocks[k].append(b)
    phi_for: dict[tuple[int, int], I.Phi] = {}
    owner: dict[int, int] = {}
    for k in _phi_order(fn, allocas, index, dt):
        a = allocas[k]
        defs = {id(b) for b in def_blocks[k]}
        live_in: set[int] = set()
        work = list(use_blocks[k])
        while work:
            b = work.pop()
            if id(b) in live_in:
                continue
            live_in.add(id(b))
            for p in preds.get(b, []):
                if id(p) not in defs:
                    work.append(p)
        # iterated dominance frontier of the storing blocks, pruned to where the alloca is live in
        placed: dict[int, BasicBlock] = {}
        work = [b for b in def_blocks[k] if dt.is_reachable(b)]
        seen = {id(b) for b in work}
        while work:
            b = work.pop()
            for f in dt.dominance_frontier(b):
                if id(f) in placed or id(f) not in live_in:
                    continue
                placed[id(f)] = f
                if id(f) not in seen:
                    seen.add(id(f))
                    work.append(f)
        version = 0
        for f in sorted(placed.values(), key=lambda blk: order[id(blk)]):
            phi = I.Phi(a.allocated_type, name=names.unique(f"{a.name or ''}.{version}"))
            version += 1
            f.insert(0, phi)
            phi_for[(id(f), k)] = phi
            owner[id(phi)] = k
    created = list(phi_for.values())
    # renaming: LLVM's depth-first walk over the CFG
    replace: dict[int, Value] = {}
    dead: list[I.Instruction] = []

    def current(v: Value) -> Value:
        while id(v) in replace:
            v = replace[id(v)]
        return v

    visited: set[int] = set()
    stack: list[tuple[BasicBlock, BasicBlock | None, list[Value]]] = [
        (fn.entry, None, [Undef(a.allocated_type) for a in allocas])]
    while stack:
        block, pred, values = stack.pop()
        values = list(values)
        while True:
            if pred is not None:
                edges = sum(1 for s in pred.terminator.successors if s is block)
                for phi in block.phis():
                    k = owner.get(id(phi))
                    if k is None:
                        continue
                    for _ in range(edges):
                        phi.add_incoming(values[k], pred)
                    values[k] = phi
            if id(block) in visited:
                break
            visited.add(id(block))
            for inst in list(block.instructions):
                if isinstance(inst, I.Store) and id(inst.pointer) in index:
                    values[index[id(inst.pointer)]] = current(inst.value)
                    dead.append(inst)
                elif isinstance(inst, I.Load) and id(inst.pointer) in index:
                    replace[id(inst)] = values[index[id(inst.pointer)]]
                    dead.append(inst)
            succs = block.terminator.successors if block.terminator is not None else []
            if not succs:
                break
            first = succs[0]
            done = {id(first)}
            for s in succs[1:]:
                if id(s) not in done:
                    done.add(id(s))
                    stack.append((s, block, list(values)))
            pred, block = block, first
    if replace:
        for inst in fn.instructions():
            for op in inst.operands:
                if id(op) in replace:
                    inst.replace_uses_of(op, current(op))
    for inst in dead:
        inst.erase()
    for a in allocas:
        a.erase()
    _simplify_phis(fn, created, dt)
    return [p for p in created if p.parent is not None]


def _simplify_phis(fn: Function, phis: list[I.Phi], dt: DominatorTree) -> None:
    """Replace phis that merge one value (ignoring themselves) by that value, until none is left."""
    changed = True
    while changed:
        changed = False
        for phi in phis:
            if phi.parent is None:
                continue
            common = _common_value(phi, dt)
            if common is not None:
                fn.replace_all_uses(phi, common)
                for other in phis:
                    if other.parent is not None:
                        other.replace_uses_of(phi, common)
                phi.erase()
                changed = True


def _common_value(phi: I.Phi, dt: DominatorTree) -> Value | None:
    common: Value | None = None
    has_undef = False
    for v, _ in phi.incoming:
        if v is phi:
            continue
        if isinstance(v, Undef):
            has_undef = True
            continue
        if common is not None and v is not common and v != common:
            return None
        common = v
    if common is None:
        return Undef(phi.type) if phi.incoming else None
    if has_undef and not _dominates_phi(common, phi, dt):
        return None
    return common


def _dominates_phi(v: Value, phi: I.Phi, dt: DominatorTree) -> bool:
    if isinstance(v, (Argument, Constant)):
        return True
    if isinstance(v, I.Instruction) and v.parent is not None:
        if isinstance(v, I.Invoke):
            return False
        return v.parent is not phi.parent and dt.dominates(v.parent, phi.parent)
    return False
