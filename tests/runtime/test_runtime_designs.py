"""The three designs build the same program and agree on what it computes; their costs are measurable."""

from __future__ import annotations

from gctoy.runtime.designs import DESIGNS, callee_loop, caller_loop, executed, make_runtime, per_call, slope


def test_every_design_runs_the_microprograms_to_the_same_result():
    for program in (caller_loop(20, 3), callee_loop(20, 3)):
        results = {d.name: executed(d.build(program))[1] for d in DESIGNS}
        assert len(set(results.values())) == 1, results
    assert [d.name for d in DESIGNS] == ["statepoint", "shadow-stack", "x86-gcinfo"]


def test_static_costs_and_a_stressed_run():
    program = callee_loop(5, 2)
    for design in DESIGNS:
        built = design.build(program)
        assert built.code_bytes > 0 and built.metadata_bytes > 0
        runtime = make_runtime(built, stress=True)
        runtime.run()
        assert len(runtime.collections) > 0, design.name
    assert DESIGNS[1].build(program).frame_bytes > 0  # StackEntries live on the machine stack


def test_per_call_cost_grows_with_roots_on_the_shadow_stack():
    shadow = DESIGNS[1]
    points = [(k, per_call(shadow, callee_loop, 20, k)) for k in (1, 2, 4)]
    assert points[0][1] < points[1][1] < points[2][1]
    assert slope(points) > 0
    statepoint = DESIGNS[0]
    assert per_call(statepoint, callee_loop, 20, 2) < points[1][1]
