"""Promote allocas to SSA values (the classic mem2reg), used by RS4GC's use rewriting.

For each promotable alloca (only loaded and stored, never escaping):

1. the blocks where it is *live in* (a load before any store in the block,
   then backwards through predecessors that do not store) — phis go only there
   (pruned SSA);
2. phis at the iterated dominance frontier of the storing blocks, restricted
   to those live-in blocks, named ``<alloca name>.<version>`` (``.0`` for an
   unnamed alloca);
3. a walk down the dominator tree carrying the current value of every alloca:
   a store sets it, a load is replaced by it, successor phis receive it.
   Before any store the value is ``undef``.
"""
from __future__ import annotations

from ..ir import instructions as I
from ..ir.analysis import DominatorTree, predecessors
from ..ir.values import BasicBlock, Function, Undef, Value
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


def promote(fn: Function, allocas: list[I.Alloca], names: NameUniquer | None = None) -> list[I.Phi]:
    """Promote ``allocas`` of ``fn`` (all must be promotable); returns the phis created."""
    if not allocas:
        return []
    names = names or NameUniquer(fn)
    index = {id(a): k for k, a in enumerate(allocas)}
    dt = DominatorTree(fn)
    preds = predecessors(fn)
    # where each alloca is stored, and where it is live in
    def_blocks: list[list[BasicBlock]] = [[] for _ in allocas]
    live_in: list[set[int]] = [set() for _ in allocas]
    use_blocks: list[list[BasicBlock]] = [[] for _ in allocas]
    for b in fn.blocks:
        seen_store: set[int] = set()
        for inst in b.instructions:
            if isinstance(inst, I.Store) and id(inst.pointer) in index:
                k = index[id(inst.pointer)]
                if k not in seen_store:
                    def_blocks[k].append(b)
                seen_store.add(k)
            elif isinstance(inst, I.Load) and id(inst.pointer) in index:
                k = index[id(inst.pointer)]
                if k not in seen_store:
                    use_blocks[k].append(b)
    for k in range(len(allocas)):
        defs = {id(b) for b in def_blocks[k]}
        work = list(use_blocks[k])
        while work:
            b = work.pop()
            if id(b) in live_in[k]:
                continue
            live_in[k].add(id(b))
            for p in preds.get(b, []):
                if id(p) not in defs:
                    work.append(p)
    # phi placement at the iterated dominance frontier
    phi_for: dict[tuple[int, int], I.Phi] = {}
    created: list[I.Phi] = []
    owner: dict[int, int] = {}
    for k, a in enumerate(allocas):
        work = list(def_blocks[k])
        placed: set[int] = set()
        while work:
            b = work.pop()
            if not dt.is_reachable(b):
                continue
            for f in dt.dominance_frontier(b):
                if id(f) in placed or id(f) not in live_in[k]:
                    continue
                placed.add(id(f))
                phi = I.Phi(a.allocated_type, name=None)
                phi_for[(id(f), k)] = phi
                created.append(phi)
                owner[id(phi)] = k
                if all(id(f) != id(x) for x in def_blocks[k]):
                    work.append(f)
    # insert phis at block tops (a later-created phi goes first, as LLVM's does)
    by_block: dict[int, list[I.Phi]] = {}
    for (bid, k), phi in phi_for.items():
        by_block.setdefault(bid, []).append(phi)
    for b in fn.blocks:
        for phi in by_block.get(id(b), []):
            b.insert(0, phi)
    # renaming
    undef = [Undef(a.allocated_type) for a in allocas]
    replace: dict[int, Value] = {}
    dead: list[I.Instruction] = []
    version = [0 for _ in allocas]

    def current(v: Value) -> Value:
        while id(v) in replace:
            v = replace[id(v)]
        return v

    stack: list[tuple[BasicBlock, list[Value]]] = [(fn.entry, list(undef))]
    visited: set[int] = set()
    while stack:
        block, values = stack.pop()
        if id(block) in visited:
            continue
        visited.add(id(block))
        values = list(values)
        for inst in list(block.instructions):
            if isinstance(inst, I.Phi):
                for k in range(len(allocas)):
                    if phi_for.get((id(block), k)) is inst:
                        values[k] = inst
            elif isinstance(inst, I.Store) and id(inst.pointer) in index:
                values[index[id(inst.pointer)]] = current(inst.value)
                dead.append(inst)
            elif isinstance(inst, I.Load) and id(inst.pointer) in index:
                replace[id(inst)] = values[index[id(inst.pointer)]]
                dead.append(inst)
        for s in block.successors:
            for k in range(len(allocas)):
                phi = phi_for.get((id(s), k))
                if phi is not None:
                    count = sum(1 for t in block.terminator.successors if t is s)
                    for _ in range(count):
                        phi.add_incoming(values[k], block)
        for child in reversed(dt.children(block)):
            stack.append((child, values))
    # name the phis in creation order: <alloca name>.<version>
    for phi in created:
        k = owner[id(phi)]
        phi.name = names.unique(f"{allocas[k].name or ''}.{version[k]}")
        version[k] += 1
    # rewrite uses of the loads, then delete loads, stores and the allocas
    if replace:
        for inst in fn.instructions():
            for op in inst.operands:
                if id(op) in replace:
                    inst.replace_uses_of(op, current(op))
    for inst in dead:
        inst.erase()
    for a in allocas:
        a.erase()
    # phis in unreachable blocks or without incoming values never get filled: drop them
    for phi in created:
        if phi.parent is not None and not phi.incoming:
            phi.erase()
    return [p for p in created if p.parent is not None]
