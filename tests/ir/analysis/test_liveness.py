"""Liveness of SSA values: block boundaries, points around instructions, phis, invokes, GC-only sets."""
from __future__ import annotations

import pytest

from ir_analysis_support import PERSONALITY, Names, labels, parse_function
from gctoy.errors import GCToyError
from gctoy.ir.analysis import Liveness

DECLS = """
declare void @safepoint()
declare void @use(i8 addrspace(1)*)
declare i8 addrspace(1)* @g(i8 addrspace(1)*)
"""

LINE = DECLS + """
define i8 addrspace(1)* @line(i8 addrspace(1)* %a, i64 %n) {
entry:
  %b = getelementptr i8, i8 addrspace(1)* %a, i64 %n
  %s = call i8 addrspace(1)* @g(i8 addrspace(1)* %b)
  %k = add i64 %n, 1
  %c = getelementptr i8, i8 addrspace(1)* %a, i64 %k
  ret i8 addrspace(1)* %c
}
"""

PICK = DECLS + """
define i8 addrspace(1)* @pick(i1 %c, i8 addrspace(1)* %x, i8 addrspace(1)* %y) {
entry:
  %x1 = getelementptr i8, i8 addrspace(1)* %x, i64 1
  br i1 %c, label %left, label %right
left:
  call void @safepoint()
  br label %join
right:
  %y1 = getelementptr i8, i8 addrspace(1)* %y, i64 1
  br label %join
join:
  %p = phi i8 addrspace(1)* [ %x1, %left ], [ %y1, %right ]
  %q = getelementptr i8, i8 addrspace(1)* %p, i64 0
  ret i8 addrspace(1)* %q
}
"""

WALK = DECLS + """
define i8 addrspace(1)* @walk(i8 addrspace(1)* %start, i64 %n) {
entry:
  br label %loop
loop:
  %cur = phi i8 addrspace(1)* [ %start, %entry ], [ %next, %loop ]
  %i = phi i64 [ 0, %entry ], [ %i.next, %loop ]
  call void @safepoint()
  %next = getelementptr i8, i8 addrspace(1)* %cur, i64 8
  %i.next = add i64 %i, 1
  %done = icmp eq i64 %i.next, %n
  br i1 %done, label %exit, label %loop
exit:
  ret i8 addrspace(1)* %cur
}
"""


def sets(lv, fn):
    return ({b.name: labels(lv.live_in[b]) for b in fn.blocks},
            {b.name: labels(lv.live_out[b]) for b in fn.blocks})


def test_straight_line_points():
    fn = parse_function(LINE, "line")
    n = Names(fn)
    lv = Liveness(fn)
    assert labels(lv.live_in[fn.blocks[0]]) == ["a", "n"]
    assert labels(lv.live_out[fn.blocks[0]]) == []
    assert labels(lv.live_before(n.inst("b"))) == ["a", "n"]
    assert labels(lv.live_after(n.inst("b"))) == ["a", "n", "b"]
    assert labels(lv.live_before(n.inst("s"))) == ["a", "n", "b"]
    assert labels(lv.live_after(n.inst("s"))) == ["a", "n"]          # %s is never read
    assert labels(lv.live_across(n.inst("s"))) == ["a", "n"]
    assert labels(lv.live_after(n.inst("k"))) == ["a", "k"]
    ret = fn.blocks[0].terminator
    assert labels(lv.live_before(ret)) == ["c"]
    assert lv.live_after(ret) == ()


def test_gc_only_tracks_gc_pointers():
    fn = parse_function(LINE, "line")
    n = Names(fn)
    lv = Liveness(fn, gc_only=True)
    assert labels(lv.live_across(n.inst("s"))) == ["a"]
    assert labels(lv.live_after(n.inst("k"))) == ["a"]
    assert labels(lv.live_in[fn.blocks[0]]) == ["a"]
    assert len(lv.numbering) == 4                                      # %a, %b, %s, %c


def test_phi_operands_are_live_out_of_the_incoming_block():
    fn = parse_function(PICK, "pick")
    live_in, live_out = sets(Liveness(fn), fn)
    assert live_in == {"entry": ["c", "x", "y"], "left": ["x1"], "right": ["y"], "join": []}
    assert live_out == {"entry": ["y", "x1"], "left": ["x1"], "right": ["y1"], "join": []}


def test_phi_results_are_defined_at_block_start():
    fn = parse_function(PICK, "pick")
    n = Names(fn)
    lv = Liveness(fn)
    assert lv.live_before(n.inst("p")) == ()
    assert labels(lv.live_after(n.inst("p"))) == ["p"]
    call = n.block("left").instructions[0]
    assert labels(lv.live_across(call)) == ["x1"]


def test_loop_carried_values():
    fn = parse_function(WALK, "walk")
    n = Names(fn)
    live_in, live_out = sets(Liveness(fn), fn)
    assert live_in == {"entry": ["start", "n"], "loop": ["n"], "exit": ["cur"]}
    assert live_out == {"entry": ["start", "n"], "loop": ["n", "cur", "next", "i.next"], "exit": []}
    lv = Liveness(fn)
    call = n.block("loop").instructions[2]
    assert labels(lv.live_across(call)) == ["n", "cur", "i"]
    assert labels(Liveness(fn, gc_only=True).live_across(call)) == ["cur"]
    assert labels(Liveness(fn, gc_only=True).live_out[n.block("loop")]) == ["cur", "next"]


def test_all_phis_of_a_block_act_together():
    fn = parse_function(WALK, "walk")
    n = Names(fn)
    lv = Liveness(fn)
    for phi in ("cur", "i"):
        assert labels(lv.live_before(n.inst(phi))) == ["n"]
        assert labels(lv.live_after(n.inst(phi))) == ["n", "cur", "i"]


def test_swapping_phis():
    fn = parse_function("""
define i64 @swap(i1 %c) {
entry:
  br label %loop
loop:
  %a = phi i64 [ 1, %entry ], [ %b, %loop ]
  %b = phi i64 [ 2, %entry ], [ %a, %loop ]
  br i1 %c, label %loop, label %exit
exit:
  ret i64 %a
}
""")
    live_in, live_out = sets(Liveness(fn), fn)
    assert live_in == {"entry": ["c"], "loop": ["c"], "exit": ["a"]}
    assert live_out == {"entry": ["c"], "loop": ["c", "a", "b"], "exit": []}


def test_invoke_keeps_unwind_values_live_across_it():
    fn = parse_function(DECLS + PERSONALITY + """
define i8 addrspace(1)* @inv(i8 addrspace(1)* %a, i8 addrspace(1)* %b) personality i32 (...)* @__gxx_personality_v0 {
entry:
  %r = invoke i8 addrspace(1)* @g(i8 addrspace(1)* %a) to label %ok unwind label %lp
ok:
  ret i8 addrspace(1)* %r
lp:
  %t = landingpad { i8*, i32 } cleanup
  call void @use(i8 addrspace(1)* %b)
  resume { i8*, i32 } %t
}
""", "inv")
    n = Names(fn)
    lv = Liveness(fn)
    inv = n.inst("r")
    assert labels(lv.live_before(inv)) == ["a", "b"]
    assert labels(lv.live_after(inv)) == ["b", "r"]
    assert labels(lv.live_across(inv)) == ["b"]
    live_in, live_out = sets(lv, fn)
    assert live_in == {"entry": ["a", "b"], "ok": ["r"], "lp": ["b"]}
    assert live_out == {"entry": ["b", "r"], "ok": [], "lp": []}
    assert labels(lv.live_across(n.block("lp").instructions[1])) == ["t"]


def test_unreachable_blocks_do_not_leak_into_reachable_ones():
    fn = parse_function("""
define i64 @f(i64 %a, i64 %b) {
entry:
  br label %join
dead:
  %z = add i64 %b, 1
  br label %join
join:
  %p = phi i64 [ %a, %entry ], [ %z, %dead ]
  ret i64 %p
}
""")
    live_in, live_out = sets(Liveness(fn), fn)
    assert live_in == {"entry": ["a"], "dead": ["b"], "join": []}
    assert live_out == {"entry": ["a"], "dead": ["z"], "join": []}


def test_constants_globals_and_void_results_are_never_live():
    fn = parse_function("""
@g = global i64 0
declare void @sink(i64*, i64)

define void @f(i64 %a) {
entry:
  call void @sink(i64* @g, i64 7)
  store i64 %a, i64* @g
  call void @sink(i64* @g, i64 %a)
  ret void
}
""", "f")
    lv = Liveness(fn)
    first, store, second, _ = fn.blocks[0].instructions
    assert labels(lv.live_before(first)) == ["a"]
    assert labels(lv.live_across(first)) == ["a"]
    assert labels(lv.live_after(store)) == ["a"]
    assert lv.live_after(second) == ()
    assert len(lv.numbering) == 1


def test_membership_helpers_and_bits():
    fn = parse_function(WALK, "walk")
    n = Names(fn)
    lv = Liveness(fn)
    assert lv.is_live_in(n["n"], n.block("loop"))
    assert not lv.is_live_in(n["cur"], n.block("loop"))
    assert lv.is_live_out(n["next"], n.block("loop"))
    assert not lv.is_live_out(n["start"], n.block("loop"))
    call = n.block("loop").instructions[2]
    assert lv.numbering.decode(lv.bits_after(call)) == lv.live_after(call)
    assert lv.numbering.decode(lv.bits_before(call)) == lv.live_before(call)
    assert list(lv.live_in) == fn.blocks and len(lv.live_out) == 3


def test_foreign_instruction_is_an_error():
    lv = Liveness(parse_function(WALK, "walk"))
    other = parse_function(PICK, "pick")
    with pytest.raises(GCToyError):
        lv.live_after(other.blocks[0].instructions[0])


def test_render():
    fn = parse_function(WALK, "walk")
    assert Liveness(fn, gc_only=True).render() == (
        "GC pointer liveness of @walk\n"
        "%entry:\n  in:  %start\n  out: %start\n"
        "%loop:\n  in:  -\n  out: %cur, %next\n"
        "%exit:\n  in:  %cur\n  out: -\n"
    )
