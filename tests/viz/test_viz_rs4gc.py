"""gctoy.viz.rs4gc: RS4GC's phases as drawable pages (no Jupyter involved)."""
from __future__ import annotations

import re

from gctoy.ir.analysis import LocalNames
from gctoy.passes.rs4gc_trace import trace_rs4gc
from gctoy.viz.rs4gc import ANALYSIS_PHASES, PhaseLiveness, phase_pages, safepoint_calls, snapshot_module

SRC = """
declare void @foo()
declare void @leaf() "gc-leaf-function"
define i8 addrspace(1)* @f(i1 %c, i8 addrspace(1)* %a, i8 addrspace(1)* %b, i64 %i) gc "statepoint-example" {
entry:
  %a1 = getelementptr i8, i8 addrspace(1)* %a, i64 8
  %b1 = getelementptr i8, i8 addrspace(1)* %b, i64 16
  %d = getelementptr i8, i8 addrspace(1)* %a, i64 %i
  br i1 %c, label %l, label %r
l:
  br label %m
r:
  br label %m
m:
  %p = phi i8 addrspace(1)* [ %a1, %l ], [ %b1, %r ]
  call void @leaf()
  call void @foo()
  store i8 0, i8 addrspace(1)* %d
  ret i8 addrspace(1)* %p
}
define void @other() {
  ret void
}
"""


def test_snapshot_module_keeps_the_rest_of_the_module():
    snap = trace_rs4gc(SRC, "f")[-1]
    m = snapshot_module(SRC, snap, "f")
    assert {f.name for f in m.functions} >= {"f", "foo", "leaf", "other", "llvm.experimental.gc.relocate.p1i8"}
    assert str(m).startswith(snap.ir)


def test_safepoint_calls_skip_leaves_and_intrinsics():
    snaps = trace_rs4gc(SRC, "f")
    for snap in snaps:
        m = snapshot_module(SRC, snap, "f")
        fn = m.get_function("f")
        calls = safepoint_calls(fn, m)
        assert len(calls) == len(snap.calls) == 1
        expected = "@llvm.experimental.gc.statepoint" if snap.phase in ("statepoints", "uses rewritten") else "@foo"
        assert calls[0].callee_name == expected[1:] or calls[0].callee_name.startswith(expected[1:])


def test_live_across_lines_follow_the_pass_then_the_ir():
    pages = {p.phase: p for p in phase_pages(SRC, "f", render=False)}

    def under_foo(phase: str) -> str:
        # the first line is under the GC-leaf call (generic liveness), the last under @foo
        return re.findall(r"live across: [^<]*", pages[phase].dot)[-1]

    assert under_foo("tidy") == "live across: %d, %p"
    # the pass's live set, bases included once known; %d leaves it when it is to be rematerialised
    assert under_foo("liveness") == "live across: %d, %p"
    assert under_foo("liveness with bases") == "live across: %a, %d, %p.base, %p"
    assert under_foo("rematerialization") == "live across: %a, %p.base, %p"
    # after the statepoint is built, old values are still used after it ...
    assert under_foo("statepoints") == "live across: %d, %p"
    # ... and once uses are rewritten, nothing unrelocated is live across it
    assert under_foo("uses rewritten") == "live across: (none)"
    assert set(ANALYSIS_PHASES) < set(pages)


def test_changed_instructions_are_marked():
    pages = phase_pages(SRC, "f", render=False)
    assert pages[0].changed == ()
    bases = next(p for p in pages if p.phase == "bases")
    assert bases.changed == ("%p.base = phi i8 addrspace(1)* [ %a, %l ], [ %b, %r ], !is_base_value !0",)
    statepoints = next(p for p in pages if p.phase == "statepoints")
    assert "%d.remat = getelementptr i8, i8 addrspace(1)* %a.relocated, i64 %i" in statepoints.changed
    assert pages[-1].changed == ("store i8 0, i8 addrspace(1)* %d.remat, align 1", "ret i8 addrspace(1)* %p.relocated")
    assert "#ffc9c9" in pages[-1].dot  # the highlight colour


def test_phase_liveness_prefers_given_sets():
    snap = trace_rs4gc(SRC, "f")[1]
    m = snapshot_module(SRC, snap, "f")
    fn = m.get_function("f")
    (call,) = safepoint_calls(fn, m)
    names = LocalNames(fn)
    assert [names(v) for v in PhaseLiveness(fn).live_after(call)] == ["%d", "%p"]
    assert PhaseLiveness(fn, {id(call): (fn.args[1],)}).live_after(call) == (fn.args[1],)


def test_pages_are_deterministic():
    assert [p.dot for p in phase_pages(SRC, "f", render=False)] == [p.dot for p in phase_pages(SRC, "f", render=False)]


DEOPT = """
declare void @foo()
define i8 addrspace(1)* @g(i8 addrspace(1)* %obj, i32 %bci) gc "statepoint-example" {
entry:
  call void @foo() [ "deopt"(i32 %bci, i8 addrspace(1)* %obj) ]
  call void @foo()
  ret i8 addrspace(1)* %obj
}
"""


def test_holder_calls_are_not_taken_for_safepoints():
    # while liveness is computed, a deopt operand is held by a call of @__tmp_use after the call
    snaps = {s.phase: s for s in trace_rs4gc(DEOPT, "g")}
    assert "@__tmp_use" in snaps["liveness"].ir
    m = snapshot_module(DEOPT, snaps["liveness"], "g")
    assert [c.callee_name for c in safepoint_calls(m.get_function("g"), m)] == ["foo", "foo"]
    page = next(p for p in phase_pages(DEOPT, "g", render=False) if p.phase == "liveness")
    assert page.dot.count("live across: %obj") >= 2


def test_a_renamed_relocate_comment_is_not_a_change():
    # after uses are rewritten, the second relocate's comment names %obj.relocated, not %obj
    pages = {p.phase: p for p in phase_pages(DEOPT, "g", render=False)}
    assert "(%obj.relocated, %obj.relocated)" in pages["uses rewritten"].ir
    assert not any("gc.relocate" in t for t in pages["uses rewritten"].changed)
    assert all(" ; (" not in t for p in pages.values() for t in p.changed)


def test_a_wide_graph_is_scaled_to_the_page_not_scrolled():
    """Graphviz gives its width in points (1697pt for the last phases of chapter 04's example); the SVG must
    carry max-width:100% and height:auto so that the page column (about 790 px) holds the whole graph."""
    from gctoy.viz.rs4gc import _svg_body

    raw = ('<?xml version="1.0"?>\n<!-- Generated by graphviz -->\n<svg width="1697pt" height="400pt" '
           'viewBox="0.00 0.00 1697.00 400.00" xmlns="http://www.w3.org/2000/svg"><g/></svg>')
    body = _svg_body(raw)
    assert body.startswith('<svg style="max-width:100%;height:auto" width="1697pt"') and "viewBox" in body
    assert "<!--" not in body and "<?xml" not in body
