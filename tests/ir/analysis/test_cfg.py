"""Edges, predecessors, traversal orders, reachability and critical edges."""
from __future__ import annotations

import pytest

from ir_analysis_support import IRREDUCIBLE, Names, edge_names, labels, parse_function
from gctoy.errors import GCToyError
from gctoy.ir import parse_module
from gctoy.ir.analysis import (
    critical_edges,
    edges,
    post_order,
    predecessors,
    reachable_blocks,
    retreating_edges,
    reverse_post_order,
    unreachable_blocks,
)

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

TRIANGLE_SWITCH = """
define void @tri(i1 %c, i32 %x) {
entry:
  br i1 %c, label %then, label %join
then:
  switch i32 %x, label %join [ i32 0, label %other
                               i32 1, label %join ]
other:
  br label %join
join:
  ret void
}
"""


def test_edges_follow_block_and_terminator_order():
    fn = parse_function(DIAMOND)
    assert edge_names(edges(fn)) == [
        ("entry", "left"), ("entry", "right"), ("left", "join"), ("right", "join"), ("dead", "join"),
    ]


def test_edges_are_unpackable_pairs():
    fn = parse_function(DIAMOND)
    source, target = edges(fn)[0]
    assert (source.name, target.name) == ("entry", "left")


def test_predecessors_in_function_order_including_unreachable():
    fn = parse_function(DIAMOND)
    preds = predecessors(fn)
    assert labels(preds[Names(fn).block("join")]) == ["left", "right", "dead"]
    assert preds[Names(fn).block("entry")] == []


def test_switch_with_repeated_target_gives_one_edge():
    fn = parse_function(TRIANGLE_SWITCH)
    assert edge_names(edges(fn)) == [
        ("entry", "then"), ("entry", "join"), ("then", "join"), ("then", "other"), ("other", "join"),
    ]
    assert labels(predecessors(fn)[Names(fn).block("join")]) == ["entry", "then", "other"]


def test_post_order_and_reverse_post_order_of_a_diamond():
    fn = parse_function(DIAMOND)
    assert labels(post_order(fn)) == ["join", "left", "right", "entry"]
    assert labels(reverse_post_order(fn)) == ["entry", "right", "left", "join"]


def test_reachability():
    fn = parse_function(DIAMOND)
    assert labels(reachable_blocks(fn)) == ["entry", "left", "right", "join"]
    assert labels(unreachable_blocks(fn)) == ["dead"]


def test_unreachable_cycle_is_unreachable():
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
    assert labels(unreachable_blocks(fn)) == ["a", "b"]
    assert labels(reverse_post_order(fn)) == ["entry"]


def test_critical_edges():
    fn = parse_function(TRIANGLE_SWITCH)
    # entry -> join: entry branches two ways and join has three predecessors.
    # then -> join likewise; then -> other is fine (other has one predecessor).
    assert edge_names(critical_edges(fn)) == [("entry", "join"), ("then", "join")]
    assert critical_edges(parse_function(DIAMOND)) == []


def test_retreating_edges():
    fn = parse_function(IRREDUCIBLE)
    assert edge_names(retreating_edges(fn)) == [("b", "a")]
    assert retreating_edges(parse_function(DIAMOND)) == []


def test_invoke_edges_both_counted():
    fn = parse_function("""
declare void @f()
declare i32 @__gxx_personality_v0(...)
define void @g() personality i32 (...)* @__gxx_personality_v0 {
entry:
  invoke void @f() to label %ok unwind label %lp
ok:
  ret void
lp:
  %t = landingpad { i8*, i32 } cleanup
  resume { i8*, i32 } %t
}
""")
    assert edge_names(edges(fn)) == [("entry", "ok"), ("entry", "lp")]


def test_declaration_is_rejected():
    m = parse_module("declare void @f()\n")
    with pytest.raises(GCToyError, match="declaration"):
        reverse_post_order(m.get_function("f"))
