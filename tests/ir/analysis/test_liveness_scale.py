"""The analyses on big functions: right answers at 20k instructions, and work that grows near-linearly.

Work is counted in lines of gctoy executed (tests/op_count.py), which is the same on any machine;
how fast the analyses run is measured against a reference by bench/bench_analysis.py.
"""
from __future__ import annotations

from big_cfg import big_function
from gctoy.ir import instructions as I
from gctoy.ir.analysis import DominatorTree, LoopInfo, Liveness
from op_count import count_lines, growth

#: blocks of the functions whose work is counted (18 instructions each, plus phis and a branch)
SIZES = (250, 500, 1000)


def test_generated_function_is_big_enough():
    fn = big_function()
    assert sum(len(b.instructions) for b in fn.blocks) >= 20_000


def test_liveness_of_20k_instructions():
    fn = big_function()
    calls = [i for i in fn.instructions() if isinstance(i, I.Call)]
    lv = Liveness(fn, gc_only=True)
    across = [lv.live_across(call) for call in calls]
    full = Liveness(fn)
    # Something is live across the calls, and GC liveness is part of full liveness.
    assert any(across)
    last = fn.blocks[-1]
    assert set(map(id, lv.live_in[last])) <= set(map(id, full.live_in[last]))


def test_dominators_and_loops_of_20k_instructions():
    fn = big_function()
    dt = DominatorTree(fn)
    info = LoopInfo(fn, dt)
    assert info.loops and dt.idom(fn.blocks[-1]) is fn.blocks[-2]


def test_liveness_work_grows_near_linearly():
    # Measured: x2.46 then x2.62 (the random loops nest deeper as the function grows, so the
    # dataflow needs a few more passes); quadratic work would show x4.
    counts = [count_lines(lambda: Liveness(big_function(blocks=n), gc_only=True))[1] for n in SIZES]
    assert all(g < 3.0 for g in growth(counts)), (counts, growth(counts))


def test_dominator_work_grows_linearly():
    functions = [big_function(blocks=n) for n in SIZES]
    counts = [count_lines(lambda: DominatorTree(fn))[1] for fn in functions]
    assert all(g < 2.2 for g in growth(counts)), (counts, growth(counts))


def test_loop_work_is_linear_in_blocks_plus_loop_bodies():
    """The loops' bodies overlap more as the function grows (their total size is quadratic here),
    so the work is measured per block of the function plus block of every loop's body."""
    per_unit = []
    for n in SIZES:
        fn = big_function(blocks=n)
        dt = DominatorTree(fn)
        info, count = count_lines(lambda: LoopInfo(fn, dt))
        per_unit.append(count / (n + sum(len(loop.blocks) for loop in info.loops)))
    assert max(per_unit) < 1.1 * min(per_unit), per_unit
