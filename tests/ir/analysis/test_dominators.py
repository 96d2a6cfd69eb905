"""Dominator trees: immediate dominators, frontiers, edge and definition-use dominance."""
from __future__ import annotations

import pytest

from ir_analysis_support import IRREDUCIBLE, PERSONALITY, Names, labels, parse_function
from gctoy.errors import GCToyError
from gctoy.ir.analysis import DominatorTree

DIAMOND = """
define void @diamond(i1 %c) {
entry:
  br i1 %c, label %left, label %right
left:
  br label %join
right:
  br label %join
join:
  ret void
dead:
  br label %join
}
"""

NESTED = """
define void @nest(i1 %c) {
entry:
  br label %outer
outer:
  br label %inner
inner:
  br i1 %c, label %inner.latch, label %outer.latch
inner.latch:
  br label %inner
outer.latch:
  br i1 %c, label %outer, label %exit
exit:
  ret void
}
"""


def idoms(fn):
    dt = DominatorTree(fn)
    return {b.name: (dt.idom(b).name if dt.idom(b) else None) for b in fn.blocks}


def test_diamond_idoms_and_children():
    fn = parse_function(DIAMOND)
    assert idoms(fn) == {"entry": None, "left": "entry", "right": "entry", "join": "entry", "dead": None}
    dt = DominatorTree(fn)
    n = Names(fn)
    assert labels(dt.children(n.block("entry"))) == ["left", "right", "join"]
    assert dt.children(n.block("left")) == []


def test_diamond_dominance_queries():
    fn = parse_function(DIAMOND)
    dt = DominatorTree(fn)
    entry, left, right, join, dead = fn.blocks
    assert dt.dominates(entry, join)
    assert dt.dominates(join, join)
    assert not dt.strictly_dominates(join, join)
    assert not dt.dominates(left, join)
    assert not dt.dominates(join, left)
    assert dt.nearest_common_dominator(left, right) is entry
    assert dt.depth(entry) == 0 and dt.depth(join) == 1


def test_unreachable_blocks_follow_llvm_conventions():
    fn = parse_function(DIAMOND)
    dt = DominatorTree(fn)
    entry, left, _, join, dead = fn.blocks
    assert not dt.is_reachable(dead)
    assert dt.idom(dead) is None
    assert dt.dominates(left, dead)        # anything dominates an unreachable block
    assert dt.dominates(dead, dead)
    assert not dt.dominates(dead, join)    # an unreachable block dominates nothing reachable
    assert dt.depth(dead) is None
    assert dt.nearest_common_dominator(dead, join) is None


def test_diamond_dominance_frontiers():
    fn = parse_function(DIAMOND)
    dt = DominatorTree(fn)
    n = Names(fn)
    assert labels(dt.dominance_frontier(n.block("left"))) == ["join"]
    assert labels(dt.dominance_frontier(n.block("right"))) == ["join"]
    assert dt.dominance_frontier(n.block("entry")) == []
    assert dt.dominance_frontier(n.block("join")) == []
    assert dt.dominance_frontier(n.block("dead")) == []


def test_nested_loops_idoms_and_frontiers():
    fn = parse_function(NESTED)
    assert idoms(fn) == {
        "entry": None, "outer": "entry", "inner": "outer", "inner.latch": "inner",
        "outer.latch": "inner", "exit": "outer.latch",
    }
    dt = DominatorTree(fn)
    n = Names(fn)
    df = {b.name: labels(dt.dominance_frontier(b)) for b in fn.blocks}
    assert df == {
        "entry": [], "outer": ["outer"], "inner": ["outer", "inner"], "inner.latch": ["inner"],
        "outer.latch": ["outer"], "exit": [],
    }
    assert dt.dominates(n.block("inner"), n.block("exit"))
    assert not dt.dominates(n.block("inner.latch"), n.block("exit"))
    assert dt.dominates(n.block("outer.latch"), n.block("exit"))


def test_irreducible_cycle_is_handled():
    fn = parse_function(IRREDUCIBLE)
    assert idoms(fn) == {"entry": None, "a": "entry", "b": "entry", "exit": "a"}
    dt = DominatorTree(fn)
    n = Names(fn)
    assert not dt.dominates(n.block("a"), n.block("b"))
    assert not dt.dominates(n.block("b"), n.block("a"))
    assert labels(dt.dominance_frontier(n.block("a"))) == ["b"]
    assert labels(dt.dominance_frontier(n.block("b"))) == ["a"]


def test_entry_with_a_predecessor_is_in_its_own_frontier():
    fn = parse_function("""
define void @spin(i1 %c) {
entry:
  br i1 %c, label %entry, label %exit
exit:
  ret void
}
""")
    dt = DominatorTree(fn)
    entry, exit_ = fn.blocks
    assert dt.idom(exit_) is entry and dt.idom(entry) is None
    assert dt.dominance_frontier(entry) == [entry]


def test_render():
    fn = parse_function(NESTED)
    assert DominatorTree(fn).render() == (
        "dominator tree of @nest\n"
        "  %entry\n"
        "    %outer\n"
        "      %inner\n"
        "        %inner.latch\n"
        "        %outer.latch\n"
        "          %exit\n"
    )
    assert DominatorTree(parse_function(DIAMOND)).render().endswith("unreachable: %dead\n")


def test_render_numbers_unnamed_blocks_like_the_printer():
    fn = parse_function("""
define void @f(i1) {
  br i1 %0, label %2, label %3
2:
  ret void
3:
  ret void
}
""")
    assert DominatorTree(fn).render() == "dominator tree of @f\n  %1\n    %2\n    %3\n"


# -- definitions and uses ---------------------------------------------------------------

STRAIGHT = """
define i64 @line(i64 %a, i1 %c) {
entry:
  %x = add i64 %a, 1
  %y = add i64 %x, 1
  br i1 %c, label %then, label %join
then:
  %z = add i64 %y, 1
  br label %join
join:
  %p = phi i64 [ %z, %then ], [ %x, %entry ]
  %w = add i64 %z, %p
  ret i64 %w
dead:
  %d = add i64 %w, 1
  br label %join
}
"""


def test_dominates_use_in_one_block_follows_order():
    fn = parse_function(STRAIGHT)
    n = Names(fn)
    dt = DominatorTree(fn)
    assert dt.dominates_use(n["x"], n.inst("y"))
    assert not dt.dominates_use(n["y"], n.inst("x"))
    assert not dt.dominates_use(n["x"], n.inst("x"))
    assert dt.dominates_use(n["a"], n.inst("x"))            # arguments dominate everything


def test_dominates_use_across_blocks():
    fn = parse_function(STRAIGHT)
    n = Names(fn)
    dt = DominatorTree(fn)
    assert dt.dominates_use(n["y"], n.inst("z"))
    assert not dt.dominates_use(n["z"], n.inst("w"))        # %then does not dominate %join
    assert dt.dominates_use(n["p"], n.inst("w"))


def test_phi_uses_count_at_the_end_of_the_incoming_block():
    fn = parse_function(STRAIGHT)
    n = Names(fn)
    dt = DominatorTree(fn)
    phi = n.inst("p")
    assert dt.dominates_use(n["z"], phi, n.block("then"))
    assert dt.dominates_use(n["x"], phi, n.block("entry"))
    assert not dt.dominates_use(n["z"], phi, n.block("entry"))
    assert dt.dominates_use(n["z"], phi)                    # every entry carrying %z
    with pytest.raises(GCToyError, match="incoming"):
        dt.dominates_use(n["y"], phi)


def test_use_in_an_unreachable_block_is_dominated():
    fn = parse_function(STRAIGHT)
    n = Names(fn)
    assert DominatorTree(fn).dominates_use(n["w"], n.inst("d"))


def test_instruction_of_another_function_is_an_error():
    fn = parse_function(STRAIGHT)
    other = parse_function(STRAIGHT)
    with pytest.raises(GCToyError, match="definition"):
        DominatorTree(fn).dominates_use(Names(other).inst("x"), Names(fn).inst("y"))
    with pytest.raises(GCToyError, match="user"):
        DominatorTree(fn).dominates_use(Names(fn).inst("x"), Names(other).inst("y"))


def test_def_in_unreachable_block_does_not_dominate_reachable_use():
    fn = parse_function("""
define i64 @f(i1 %c) {
entry:
  br label %join
dead:
  %u = add i64 1, 2
  br label %join
join:
  %v = add i64 %u, 1
  ret i64 %v
}
""")
    n = Names(fn)
    assert not DominatorTree(fn).dominates_use(n["u"], n.inst("v"))


INVOKES = PERSONALITY + """
declare i8 addrspace(1)* @make(i8 addrspace(1)*)

define i8 addrspace(1)* @inv(i8 addrspace(1)* %a, i1 %c) personality i32 (...)* @__gxx_personality_v0 {
entry:
  %r = invoke i8 addrspace(1)* @make(i8 addrspace(1)* %a) to label %ok unwind label %lp
ok:
  %u = getelementptr i8, i8 addrspace(1)* %r, i64 1
  br label %join
lp:
  %t = landingpad { i8*, i32 } cleanup
  %bad = getelementptr i8, i8 addrspace(1)* %r, i64 2
  br label %join
join:
  %p = phi i8 addrspace(1)* [ %r, %ok ], [ %a, %lp ]
  %q = phi i8 addrspace(1)* [ %r, %ok ], [ %r, %lp ]
  %after = getelementptr i8, i8 addrspace(1)* %r, i64 3
  ret i8 addrspace(1)* %p
}
"""


def test_invoke_result_is_available_only_on_the_normal_path():
    fn = parse_function(INVOKES)
    n = Names(fn)
    dt = DominatorTree(fn)
    r = n["r"]
    assert dt.dominates_use(r, n.inst("u"))
    assert not dt.dominates_use(r, n.inst("bad"))
    assert not dt.dominates_use(r, n.inst("after"))         # %join is also reached from %lp
    assert dt.dominates_use(r, n.inst("p"), n.block("ok"))
    assert dt.dominates_use(r, n.inst("p"))
    assert not dt.dominates_use(r, n.inst("q"), n.block("lp"))
    assert not dt.dominates_use(r, n.inst("q"))
    assert dt.dominates_use(n["t"], n.inst("bad"))


def test_invoke_whose_normal_edge_is_critical():
    fn = parse_function(PERSONALITY + """
declare i8 addrspace(1)* @make()

define i8 addrspace(1)* @crit(i1 %c) personality i32 (...)* @__gxx_personality_v0 {
entry:
  br i1 %c, label %call, label %merge
call:
  %r = invoke i8 addrspace(1)* @make() to label %merge unwind label %lp
merge:
  %m = phi i8 addrspace(1)* [ null, %entry ], [ %r, %call ]
  %use = getelementptr i8, i8 addrspace(1)* %r, i64 1
  ret i8 addrspace(1)* %m
lp:
  %t = landingpad { i8*, i32 } cleanup
  resume { i8*, i32 } %t
}
""")
    n = Names(fn)
    dt = DominatorTree(fn)
    assert dt.dominates_use(n["r"], n.inst("m"), n.block("call"))    # the phi sits on the edge
    assert not dt.dominates_use(n["r"], n.inst("use"))
    assert not dt.dominates_edge(n.block("call"), n.block("merge"), n.block("merge"))


def test_invoke_normal_destination_heading_a_loop():
    fn = parse_function(PERSONALITY + """
declare i8 addrspace(1)* @make()

define void @loop(i1 %c) personality i32 (...)* @__gxx_personality_v0 {
entry:
  %r = invoke i8 addrspace(1)* @make() to label %loop unwind label %lp
loop:
  %x = getelementptr i8, i8 addrspace(1)* %r, i64 1
  br i1 %c, label %loop, label %exit
exit:
  ret void
lp:
  %t = landingpad { i8*, i32 } cleanup
  resume { i8*, i32 } %t
}
""")
    n = Names(fn)
    dt = DominatorTree(fn)
    # %loop has two predecessors, but the other one (itself) is reached only through %loop.
    assert dt.dominates_use(n["r"], n.inst("x"))
    assert dt.dominates_edge(n.block("entry"), n.block("loop"), n.block("exit"))
    assert not dt.dominates_edge(n.block("entry"), n.block("loop"), n.block("lp"))


def test_invoke_with_the_same_block_as_both_destinations():
    fn = parse_function(PERSONALITY + """
declare i8 addrspace(1)* @make()

define void @both() personality i32 (...)* @__gxx_personality_v0 {
entry:
  %r = invoke i8 addrspace(1)* @make() to label %both unwind label %both
both:
  %t = landingpad { i8*, i32 } cleanup
  %x = getelementptr i8, i8 addrspace(1)* %r, i64 1
  ret void
}
""")
    n = Names(fn)
    dt = DominatorTree(fn)
    assert not dt.dominates_use(n["r"], n.inst("x"))
    assert not dt.dominates_edge(n.block("entry"), n.block("both"), n.block("both"))


def test_dominates_edge_needs_an_edge():
    fn = parse_function(DIAMOND)
    dt = DominatorTree(fn)
    entry, left, right, join, dead = fn.blocks
    assert dt.dominates_edge(entry, left, left)
    assert not dt.dominates_edge(entry, left, join)
    with pytest.raises(GCToyError, match="edge"):
        dt.dominates_edge(entry, join, join)


def test_foreign_block_is_an_error():
    dt = DominatorTree(parse_function(DIAMOND))
    other = parse_function(NESTED)
    with pytest.raises(GCToyError, match="not in"):
        dt.dominates(other.blocks[0], other.blocks[1])
