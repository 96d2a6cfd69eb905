"""A big generated function for the scale tests of the analyses and their benchmark (bench/bench_analysis.py)."""
from __future__ import annotations

import random

from gctoy.ir import instructions as I
from gctoy.ir.types import I1, I8, I64, VOID, FunctionType, ptr
from gctoy.ir.values import Argument, Function

__all__ = ["big_function"]

GC = ptr(I8, 1)


def big_function(blocks: int = 1000, per_block: int = 18, seed: int = 1) -> Function:
    """A long chain of blocks with random backedges, GC pointer phis, GEPs, adds and calls.

    Operands come mostly from the last few hundred pointers and sometimes from far
    back, so some values stay live across hundreds of blocks and loops.
    """
    rng = random.Random(seed)
    base, n, c = Argument(GC, "base"), Argument(I64, "n"), Argument(I1, "c")
    fn = Function("big", FunctionType(GC, (GC, I64, I1)), [base, n, c])
    safepoint = Function("safepoint", FunctionType(VOID, ()))
    sp_type = safepoint.ftype
    bbs = [fn.add_block(f"b{k}") for k in range(blocks)]
    ptrs, ints = [base], [n]
    preds: dict[int, list[int]] = {k: [] for k in range(blocks)}
    phis: list[tuple[I.Phi, I.Phi] | None] = []
    for k, bb in enumerate(bbs):
        if k:
            pp, pi = I.Phi(GC, name=f"pp{k}"), I.Phi(I64, name=f"pi{k}")
            bb.append(pp)
            bb.append(pi)
            ptrs.append(pp)
            ints.append(pi)
            phis.append((pp, pi))
        else:
            phis.append(None)
        for j in range(per_block):
            pick = rng.random()
            if j % 6 == 5:
                bb.append(I.Call(sp_type, safepoint, []))
            elif pick < 0.6:
                src = ptrs[-rng.randint(1, min(300, len(ptrs)))] if rng.random() < 0.9 else rng.choice(ptrs)
                g = bb.append(I.GetElementPtr(I8, src, [rng.choice(ints)], name=f"g{k}_{j}"))
                ptrs.append(g)
            else:
                a = bb.append(I.BinaryOp("add", rng.choice(ints[-50:]), rng.choice(ints[-50:]), name=f"a{k}_{j}"))
                ints.append(a)
        if k == blocks - 1:
            bb.append(I.Ret(ptrs[-1]))
        elif rng.random() < 0.3:
            back = rng.randint(max(1, k - 40), k) if k else 1
            bb.append(I.Br(bbs[k + 1], c, bbs[back]))
            preds[k + 1].append(k)
            if back != k + 1:
                preds[back].append(k)
        else:
            bb.append(I.Br(bbs[k + 1]))
            preds[k + 1].append(k)
    local_ptrs = {id(bb): [v for v in bb.instructions if v.type == GC] or [base] for bb in bbs}
    local_ints = {id(bb): [v for v in bb.instructions if v.type == I64] or [n] for bb in bbs}
    for k, pair in enumerate(phis):
        if pair is None:
            continue
        pp, pi = pair
        for p in preds[k]:
            pp.add_incoming(rng.choice(local_ptrs[id(bbs[p])]), bbs[p])
            pi.add_incoming(rng.choice(local_ints[id(bbs[p])]), bbs[p])
    return fn
