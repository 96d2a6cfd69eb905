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
            ((sb, sn),) = st
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
    dt = DominatorTree(fn)
    placed = place_phis(fn, allocas, index, dt, names)
    created = [phi for phi, _ in placed]
    replace, dead = rename(fn, allocas, index, {id(phi): k for phi, k in placed})
    if replace:
        for inst in fn.instructions():
            for op in inst.operands:
                if id(op) in replace:
                    inst.replace_uses_of(op, _current(op, replace))
    for inst in dead:
        inst.erase()
    for a in allocas:
        a.erase()
    _simplify_phis(fn, created, dt)
    return [p for p in created if p.parent is not None]


def place_phis(
    fn: Function, allocas: list[I.Alloca], index: dict[int, int], dt: DominatorTree, names: NameUniquer
) -> list[tuple[I.Phi, int]]:
    """Steps 1 and 2: insert the empty phis of ``allocas``; returns each new phi with its alloca's index."""
    order = {id(b): n for n, b in enumerate(fn.blocks)}
    preds = predecessors(fn)
    def_blocks, use_blocks = _def_and_use_blocks(fn, index, len(allocas))
    placed: list[tuple[I.Phi, int]] = []
    for k in _phi_order(fn, allocas, index, dt):
        a = allocas[k]
        live_in = _live_in_blocks(def_blocks[k], use_blocks[k], preds)
        version = 0
        for f in sorted(_phi_blocks(def_blocks[k], live_in, dt), key=lambda blk: order[id(blk)]):
            phi = I.Phi(a.allocated_type, name=names.unique(f"{a.name or ''}.{version}"))
            version += 1
            f.insert(0, phi)
            placed.append((phi, k))
    return placed


def _def_and_use_blocks(
    fn: Function, index: dict[int, int], count: int
) -> tuple[list[list[BasicBlock]], list[list[BasicBlock]]]:
    """Per alloca, the blocks that store to it and the blocks that load it before any store there."""
    def_blocks: list[list[BasicBlock]] = [[] for _ in range(count)]
    use_blocks: list[list[BasicBlock]] = [[] for _ in range(count)]
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
    return def_blocks, use_blocks


def _live_in_blocks(
    def_blocks: list[BasicBlock], use_blocks: list[BasicBlock], preds: dict[BasicBlock, list[BasicBlock]]
) -> set[int]:
    """The blocks (as ids) where the alloca's value is live in: from each using block back to the stores."""
    defs = {id(b) for b in def_blocks}
    live_in: set[int] = set()
    work = list(use_blocks)
    while work:
        b = work.pop()
        if id(b) in live_in:
            continue
        live_in.add(id(b))
        for p in preds.get(b, []):
            if id(p) not in defs:
                work.append(p)
    return live_in


def _phi_blocks(def_blocks: list[BasicBlock], live_in: set[int], dt: DominatorTree) -> list[BasicBlock]:
    """The iterated dominance frontier of the storing blocks, pruned to where the alloca is live in."""
    placed: dict[int, BasicBlock] = {}
    work = [b for b in def_blocks if dt.is_reachable(b)]
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
    return list(placed.values())


def _current(v: Value, replace: dict[int, Value]) -> Value:
    """``v`` after the replacements (a load replaced by a load replaced by ... a value)."""
    while id(v) in replace:
        v = replace[id(v)]
    return v


def rename(
    fn: Function, allocas: list[I.Alloca], index: dict[int, int], owner: dict[int, int]
) -> tuple[dict[int, Value], list[I.Instruction]]:
    """Step 3, LLVM's depth-first walk over the CFG: fills the phis (``owner``: phi id -> alloca index).

    Returns what each load (by id) is replaced by, and the loads and stores to erase."""
    replace: dict[int, Value] = {}
    dead: list[I.Instruction] = []
    visited: set[int] = set()
    stack: list[tuple[BasicBlock, BasicBlock | None, list[Value]]] = [
        (fn.entry, None, [Undef(a.allocated_type) for a in allocas])
    ]
    while stack:
        block, pred, values = stack.pop()
        values = list(values)
        while True:
            if pred is not None:
                _fill_phis(block, pred, values, owner)
            if id(block) in visited:
                break
            visited.add(id(block))
            for inst in list(block.instructions):
                if isinstance(inst, I.Store) and id(inst.pointer) in index:
                    values[index[id(inst.pointer)]] = _current(inst.value, replace)
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
    return replace, dead


def _fill_phis(block: BasicBlock, pred: BasicBlock, values: list[Value], owner: dict[int, int]) -> None:
    """Entering ``block`` from ``pred``: its new phis receive the current values (once per edge) and become them."""
    term = pred.terminator
    assert term is not None
    edges = sum(1 for s in term.successors if s is block)
    for phi in block.phis():
        k = owner.get(id(phi))
        if k is None:
            continue
        assert isinstance(phi, I.Phi)
        for _ in range(edges):
            phi.add_incoming(values[k], pred)
        values[k] = phi


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
