"""The phase-by-phase trace of RewriteStatepointsForGC that the book's widget shows."""
import pytest

from gctoy.passes.rs4gc_trace import PHASE_NOTES, trace_rs4gc

SRC = """
declare void @foo()
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
  call void @foo()
  store i8 0, i8 addrspace(1)* %d
  ret i8 addrspace(1)* %p
}
"""


def test_every_phase_in_order():
    snaps = trace_rs4gc(SRC, "f")
    assert [s.phase for s in snaps] == list(PHASE_NOTES)


def test_what_each_phase_knows():
    snaps = {s.phase: s for s in trace_rs4gc(SRC, "f")}
    assert snaps["tidy"].calls[0].call == "call @foo" and snaps["tidy"].calls[0].live == ()
    assert set(snaps["liveness"].calls[0].live) == {"%p", "%d"}
    bases = dict(snaps["bases"].calls[0].bases)
    assert bases == {"%p": "%p.base", "%d": "%a"}
    assert "%p.base = phi" in snaps["bases"].ir and "%p.base = phi" not in snaps["liveness"].ir
    assert set(snaps["liveness with bases"].calls[0].live) == {"%p", "%d", "%p.base", "%a"}
    assert snaps["rematerialization"].calls[0].remat == ("%d",)
    after = snaps["statepoints"].calls[0]
    assert after.call == "%statepoint_token = statepoint of @foo"
    assert set(after.relocates) == {("%p.base", "%p"), ("%p.base", "%p.base"), ("%a", "%a")}
    assert "%d.remat = getelementptr" in snaps["uses rewritten"].ir
    assert "store i8 0, i8 addrspace(1)* %d.remat" in snaps["uses rewritten"].ir
    assert "store i8 0, i8 addrspace(1)* %d, align 1\n" in snaps["statepoints"].ir


def test_summary_is_plain_text():
    text = trace_rs4gc(SRC, "f")[2].summary()
    assert text.splitlines()[0].startswith("== bases:")
    assert "base of %p: %p.base" in text


def test_unknown_function():
    with pytest.raises(KeyError):
        trace_rs4gc(SRC, "nope")
