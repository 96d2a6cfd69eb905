"""Chapter 05's pages: PlaceSafepoints under each combination of its switches."""

from __future__ import annotations

from gctoy.viz.polls import poll_pages

LOOP = """\
declare void @foo()
define void @gc.safepoint_poll() {
entry:
  call void @do_safepoint()
  ret void
}
declare void @do_safepoint()
define void @f(i64 %n) gc "statepoint-example" {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %next, %loop ]
  %next = add i64 %i, 1
  %done = icmp uge i64 %next, %n
  br i1 %done, label %exit, label %loop
exit:
  ret void
}
"""


def test_eight_pages_and_polls_follow_the_switches():
    pages = poll_pages(LOOP, "f")
    assert len(pages) == 8
    assert "2 polls placed" in pages["entry + backedge + call polls"]     # the entry and the loop's back edge
    assert "1 poll placed" in pages["backedge + call polls"]
    assert "1 poll placed" in pages["entry + call polls"]
    assert "0 polls placed" in pages["no polls"]
    assert 'class="add"' not in pages["no polls"]
