"""Backedges, natural loops and their nesting."""
from __future__ import annotations

from ir_analysis_support import IRREDUCIBLE, Names, edge_names, labels, parse_function
from gctoy.ir.analysis import DominatorTree, LoopInfo, backedges, is_reducible, natural_loops

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

TWO_LATCHES = """
define void @two(i1 %c, i1 %d) {
entry:
  br label %head
head:
  br i1 %c, label %body, label %exit
body:
  br i1 %d, label %head, label %more
more:
  br i1 %d, label %head, label %bail
exit:
  ret void
bail:
  ret void
}
"""


def test_backedges():
    assert edge_names(backedges(parse_function(NESTED))) == [("inner.latch", "inner"), ("outer.latch", "outer")]
    assert edge_names(backedges(parse_function(TWO_LATCHES))) == [("body", "head"), ("more", "head")]


def test_nested_loops():
    fn = parse_function(NESTED)
    info = LoopInfo(fn)
    outer, inner = info.loops
    assert outer.header.name == "outer"
    assert labels(outer.blocks) == ["outer", "inner", "inner.latch", "outer.latch"]
    assert labels(outer.latches) == ["outer.latch"]
    assert labels(outer.exiting) == ["outer.latch"]
    assert labels(outer.exits) == ["exit"]
    assert inner.header.name == "inner"
    assert labels(inner.blocks) == ["inner", "inner.latch"]
    assert labels(inner.latches) == ["inner.latch"]
    assert labels(inner.exiting) == ["inner"]
    assert labels(inner.exits) == ["outer.latch"]
    assert inner.parent is outer and outer.parent is None
    assert outer.children == [inner] and inner.children == []
    assert (outer.depth, inner.depth) == (1, 2)
    assert info.top_level == [outer]


def test_block_queries():
    fn = parse_function(NESTED)
    info = LoopInfo(fn)
    n = Names(fn)
    assert info.loop_for(n.block("inner.latch")).header.name == "inner"
    assert info.loop_for(n.block("outer.latch")).header.name == "outer"
    assert info.loop_for(n.block("exit")) is None
    assert [info.depth(b) for b in fn.blocks] == [0, 1, 2, 2, 1, 0]
    assert [b.name for b in fn.blocks if info.is_header(b)] == ["outer", "inner"]
    outer = info.loops[0]
    assert n.block("inner.latch") in outer and outer.contains(n.block("inner"))
    assert n.block("exit") not in outer
    assert len(outer) == 4


def test_backedges_into_one_header_make_one_loop():
    fn = parse_function(TWO_LATCHES)
    (loop,) = natural_loops(fn)
    assert labels(loop.blocks) == ["head", "body", "more"]
    assert labels(loop.latches) == ["body", "more"]
    assert labels(loop.exiting) == ["head", "more"]
    assert labels(loop.exits) == ["exit", "bail"]


def test_self_loop():
    fn = parse_function("""
define void @spin(i1 %c) {
entry:
  br label %spin
spin:
  br i1 %c, label %spin, label %out
out:
  ret void
}
""")
    (loop,) = natural_loops(fn)
    assert labels(loop.blocks) == ["spin"] and labels(loop.latches) == ["spin"]


def test_sibling_loops_in_function_order():
    fn = parse_function("""
define void @sib(i1 %c) {
entry:
  br label %a
a:
  br i1 %c, label %a, label %b
b:
  br i1 %c, label %b, label %out
out:
  ret void
}
""")
    info = LoopInfo(fn)
    assert [lp.header.name for lp in info.loops] == ["a", "b"]
    assert info.top_level == info.loops


def test_irreducible_cycle_is_not_a_natural_loop():
    fn = parse_function(IRREDUCIBLE)
    assert backedges(fn) == []
    assert natural_loops(fn) == []
    assert not is_reducible(fn)
    assert is_reducible(parse_function(NESTED))


def test_unreachable_cycle_is_ignored():
    fn = parse_function("""
define void @f() {
entry:
  ret void
a:
  br label %b
b:
  br label %a
}
""")
    assert natural_loops(fn) == [] and backedges(fn) == []


def test_loop_body_ignores_unreachable_predecessors():
    fn = parse_function("""
define void @f(i1 %c) {
entry:
  br label %head
head:
  br i1 %c, label %latch, label %exit
latch:
  br label %head
dead:
  br label %latch
exit:
  ret void
}
""")
    (loop,) = natural_loops(fn)
    assert labels(loop.blocks) == ["head", "latch"]


def test_shared_dominator_tree_is_used():
    fn = parse_function(NESTED)
    dt = DominatorTree(fn)
    assert LoopInfo(fn, dt).dominators is dt


def test_render():
    info = LoopInfo(parse_function(NESTED))
    assert info.render() == (
        "loops of @nest\n"
        "  loop %outer: blocks %outer, %inner, %inner.latch, %outer.latch; latches %outer.latch; exits %exit\n"
        "    loop %inner: blocks %inner, %inner.latch; latches %inner.latch; exits %outer.latch\n"
    )
    assert LoopInfo(parse_function(IRREDUCIBLE)).render() == "loops of @irr\n  (none)\n"
