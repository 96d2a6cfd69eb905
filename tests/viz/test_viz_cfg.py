"""gctoy.viz.cfg: the DOT text of a CFG names every block, edge and live GC pointer, and never changes."""
from __future__ import annotations

import re

import graphviz  # noqa: F401 - part of the [book] extra; the tests need it
import pytest

from gctoy.ir import parse_module
from gctoy.ir.analysis import Liveness
from gctoy.viz import InstructionKind, cfg_dot_source, cfg_graph, edge_labels, instruction_kind
from gctoy.viz.cfg import wrap_ir

# A list walk in the explicit form: a loop whose statepoint relocates the head and the cursor.
WALK = """
define i8 addrspace(1)* @walk(i8 addrspace(1)* %head, i32 %n) gc "statepoint-example" {
entry:
  br label %loop

loop:
  %h = phi i8 addrspace(1)* [ %head, %entry ], [ %h.rel, %loop ]
  %cur = phi i8 addrspace(1)* [ %head, %entry ], [ %next, %loop ]
  %i = phi i32 [ 0, %entry ], [ %i.next, %loop ]
  %tok = call token (i64, i32, void ()*, i32, i32, ...) @llvm.experimental.gc.statepoint.p0f_isVoidf(i64 0, i32 0, void ()* @foo, i32 0, i32 0, i32 0, i32 0) [ "gc-live"(i8 addrspace(1)* %h, i8 addrspace(1)* %cur) ]
  %h.rel = call coldcc i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token %tok, i32 0, i32 0)
  %cur.rel = call coldcc i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token %tok, i32 1, i32 1)
  %slot = bitcast i8 addrspace(1)* %cur.rel to i8 addrspace(1)* addrspace(1)*
  %next = load i8 addrspace(1)*, i8 addrspace(1)* addrspace(1)* %slot
  %i.next = add i32 %i, 1
  %done = icmp eq i32 %i.next, %n
  br i1 %done, label %exit, label %loop

exit:
  ret i8 addrspace(1)* %h.rel
}

declare void @foo()
declare token @llvm.experimental.gc.statepoint.p0f_isVoidf(i64, i32, void ()*, i32, i32, ...)
declare i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token, i32, i32)
"""

# The same walk before rewriting: a plain call the collector may stop in.
ABSTRACT = """
define i8 addrspace(1)* @walk(i8 addrspace(1)* %head, i32 %n) gc "statepoint-example" {
entry:
  br label %loop

loop:
  %cur = phi i8 addrspace(1)* [ %head, %entry ], [ %next, %loop ]
  %i = phi i32 [ 0, %entry ], [ %i.next, %loop ]
  call void @foo()
  %slot = bitcast i8 addrspace(1)* %cur to i8 addrspace(1)* addrspace(1)*
  %next = load i8 addrspace(1)*, i8 addrspace(1)* addrspace(1)* %slot
  %i.next = add i32 %i, 1
  %done = icmp eq i32 %i.next, %n
  br i1 %done, label %exit, label %loop

exit:
  ret i8 addrspace(1)* %head
}

declare void @foo()
"""


def _walk(text: str = WALK):
    return parse_module(text, "walk.ll").get_function("walk")


def _rows(source: str, node: str) -> list[str]:
    """The text of the table rows of one node, tags removed, entities kept."""
    m = re.search(rf"^\s*{node} \[label=<(.*)>\]$", source, re.M)
    assert m, f"node {node} not in DOT source"
    cells = re.findall(r"<TD[^>]*>(.*?)</TD>", m.group(1))
    return [re.sub(r"<[^>]+>", "", c).replace("&#160;", " ") for c in cells]


def test_blocks_are_nodes_in_order_with_their_labels():
    src = cfg_dot_source(_walk())
    assert [line.split()[0] for line in src.splitlines() if "[label=<" in line] == ["b0", "b1", "b2"]
    assert _rows(src, "b0")[0] == "entry:"
    assert _rows(src, "b1")[0] == "loop:"
    assert _rows(src, "b2") == ["exit:", "ret i8 addrspace(1)* %h.rel"]


def test_edges_carry_branch_labels():
    src = cfg_dot_source(_walk())
    edges = [line.strip() for line in src.splitlines() if "->" in line]
    assert edges == ["b0 -> b1", "b1 -> b2 [label=T]", "b1 -> b1 [label=F]"]


def test_instructions_are_printed_in_order():
    rows = _rows(cfg_dot_source(_walk(), wrap=0), "b1")
    assert rows[1].startswith("%h = phi i8 addrspace(1)*")
    assert rows[4].startswith("%tok = call token")
    assert rows[-1] == "br i1 %done, label %exit, label %loop"


def test_live_gc_pointers_of_the_explicit_form():
    fn = _walk()
    rows = _rows(cfg_dot_source(fn, Liveness(fn, gc_only=True), wrap=0), "b1")
    assert rows[1] == "live-in: (none)"  # phi operands are live on the incoming edges, not in the block
    k = next(i for i, r in enumerate(rows) if r.startswith("%tok = "))
    assert rows[k + 1].strip() == "live across: (none)"  # everything the loop needs is relocated
    assert rows[-1] == "live-out: %h.rel, %next"
    exit_rows = _rows(cfg_dot_source(fn, Liveness(fn, gc_only=True)), "b2")
    assert exit_rows[1] == "live-in: %h.rel"
    assert exit_rows[-1] == "live-out: (none)"


def test_live_across_a_plain_call_names_what_must_be_relocated():
    fn = _walk(ABSTRACT)
    rows = _rows(cfg_dot_source(fn, Liveness(fn, gc_only=True)), "b1")
    k = rows.index("call void @foo()")
    assert rows[k + 1].strip() == "live across: %head, %cur"
    assert "live across" not in " ".join(rows[k + 2:])  # loads and adds are not safepoints


def test_statepoint_and_relocates_are_coloured():
    src = cfg_dot_source(_walk(), wrap=0)
    line = next(l for l in src.splitlines() if l.strip().startswith("b1 "))
    assert re.search(r'BGCOLOR="#fde4a6">%tok = call token', line)
    assert line.count('<FONT COLOR="#1b7a3a">') == 2


def test_highlight_marks_blocks_and_instructions():
    fn = _walk()
    add = next(i for i in fn.instructions() if getattr(i, "name", None) == "i.next")
    src = cfg_dot_source(fn, highlight=[fn.blocks[2], add], wrap=0)
    b2 = next(l for l in src.splitlines() if l.strip().startswith("b2 "))
    assert 'BORDER="3"' in b2 and 'COLOR="#c62828"' in b2
    assert re.search(r'BGCOLOR="#ffc9c9"><B>%i.next = add i32 %i, 1', src)


def test_deterministic_across_calls_and_parses():
    fn = _walk()
    lv = Liveness(fn, gc_only=True)
    first = cfg_dot_source(fn, lv)
    assert cfg_dot_source(fn, lv) == first
    fn2 = _walk()
    assert cfg_dot_source(fn2, Liveness(fn2, gc_only=True)) == first


def test_html_special_characters_are_escaped():
    text = """
define void @f(<2 x i32> %v) {
  call void @g(<2 x i32> %v) "note"="a&b"
  ret void
}
declare void @g(<2 x i32>)
"""
    src = cfg_dot_source(parse_module(text).get_function("f"))
    assert "&lt;2 x i32&gt;" in src and "&amp;" in src and "&quot;" in src
    assert "<2 x i32>" not in src


def test_switch_and_invoke_edge_labels():
    text = """
define void @f(i32 %x) personality i32 (...)* @p {
entry:
  switch i32 %x, label %other [ i32 1, label %one
                                i32 2, label %one ]
one:
  invoke void @g() to label %other unwind label %lp
other:
  ret void
lp:
  %e = landingpad { i8*, i32 } cleanup
  resume { i8*, i32 } %e
}
declare void @g()
declare i32 @p(...)
"""
    fn = parse_module(text).get_function("f")
    labels = [(t.name, l) for t, l in edge_labels(fn.blocks[0])]
    assert labels == [("other", "default"), ("one", "1,2")]
    src = cfg_dot_source(fn)
    assert "b1 -> b2 [label=normal]" in src
    assert "b1 -> b3 [label=unwind style=dashed]" in src


def test_unnamed_blocks_use_printer_numbers():
    text = """
define i32 @f(i1 %0) {
  br i1 %0, label %2, label %3
2:
  ret i32 1
3:
  ret i32 0
}
"""
    src = cfg_dot_source(parse_module(text).get_function("f"))
    assert _rows(src, "b0")[0] == "1:"
    assert _rows(src, "b1")[0] == "2:"
    assert _rows(src, "b2")[0] == "3:"


def test_instruction_kinds():
    kinds = [instruction_kind(i) for i in _walk().instructions()]
    assert kinds.count(InstructionKind.STATEPOINT) == 1
    assert kinds.count(InstructionKind.RELOCATE) == 2
    assert kinds.count(InstructionKind.RESULT) == 0


def test_wrap_breaks_at_commas_and_keeps_text():
    line = "call void @f(i32 1, i32 2, i32 3, i32 4)"
    lines = wrap_ir(line, 20)
    assert all(len(l) <= 24 for l in lines) and len(lines) > 1
    assert " ".join(l.strip() for l in lines) == line
    assert wrap_ir(line, 0) == [line]


def test_declarations_have_no_graph():
    m = parse_module(WALK, "walk.ll")
    with pytest.raises(ValueError, match="declaration"):
        cfg_graph(m.get_function("foo"))
