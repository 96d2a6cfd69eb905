"""RewriteStatepointsForGC's phases as functions: each can be run on its own, in order, by hand."""
from __future__ import annotations

from dataclasses import fields
from functools import partial

from gctoy.ir import parse_module
from gctoy.passes import base_pointers as bp
from gctoy.passes import rewrite_statepoints as rs
from gctoy.passes.rs4gc_analyze import bases, liveness, tidy
from gctoy.passes.rs4gc_state import FunctionState
from gctoy.passes.rs4gc_strip import strip_invalid_attributes

SRC = """
declare void @g()

define i8 addrspace(1)* @f(i8 addrspace(1)* %a, i8 addrspace(1)* %b, i1 %c) gc "statepoint-example" {
entry:
  br i1 %c, label %l, label %r
l:
  %x = getelementptr i8, i8 addrspace(1)* %a, i64 8
  br label %m
r:
  %y = getelementptr i8, i8 addrspace(1)* %b, i64 16
  br label %m
m:
  %p = phi i8 addrspace(1)* [ %x, %l ], [ %y, %r ]
  call void @g() [ "deopt"() ]
  ret i8 addrspace(1)* %p
}
"""


def _by_name(state: FunctionState) -> dict[str, str]:
    return {v.name: state.base_of(v).name for r in state.records for v in r.live}


def test_phases_by_hand_print_what_the_pass_prints():
    whole = parse_module(SRC)
    rs.rewrite_module(whole)
    module = parse_module(SRC)
    state = FunctionState.start(module, module.get_function("f"))
    for _, phase in rs.PHASES:
        state = phase(state)
    strip_invalid_attributes(module, state.options.llvm)
    assert str(module) == str(whole)
    assert "%p.base = phi" in str(module)


def test_one_phase_at_a_time():
    module = parse_module(SRC)
    state = tidy(FunctionState.start(module, module.get_function("f")))
    assert [r.call.callee_name for r in state.records] == ["g"]
    assert state.bases == {} and not state.records[0].live
    state = liveness(state)
    assert [v.name for v in state.records[0].live] == ["p"]
    state = bases(state)
    assert _by_name(state) == {"p": "p.base"}


def test_a_lab_swaps_in_its_own_base_finder():
    class SelfBased(bp.BaseFinder):
        def find_base(self, v):
            return v

    module = parse_module(SRC)
    phases = [(n, partial(bases, finder_class=SelfBased) if n == "bases" else p) for n, p in rs.PHASES]
    rs.rewrite_module(module, phases=phases)
    assert ".base" not in str(module)


def test_the_state_has_no_attribute_made_on_the_fly():
    module = parse_module(SRC)
    state = rs.rewrite_function(module, module.get_function("f"))
    assert set(vars(state)) == {f.name for f in fields(FunctionState)}
    assert all(set(vars(r)) == {f.name for f in fields(type(r))} for r in state.records)
