"""gctoy.viz.eras: one statepoint laid out in the three historical forms, side by side."""
from __future__ import annotations

import pytest

from gctoy.ir import parse_module
from gctoy.ir.statepoint import StatepointForm, statepoints
from gctoy.viz import statepoint_layout
from gctoy.viz.eras import OPERAND_KINDS, era_table, operand_cells, operand_kind

# Modern form: ID 7, two call arguments, three deopt values, two GC pointers (the second derived).
LOOKUP = """
declare i64 @hash(i8 addrspace(1)*, i64)

define i8 @lookup(i8 addrspace(1)* %table, i64 %key, i32 %pc) gc "statepoint-example" {
entry:
  %elem = getelementptr i8, i8 addrspace(1)* %table, i64 %key
  %tok = call token (i64, i32, i64 (i8 addrspace(1)*, i64)*, i32, i32, ...) @llvm.experimental.gc.statepoint.p0f_i64p1i8i64f(i64 7, i32 0, i64 (i8 addrspace(1)*, i64)* @hash, i32 2, i32 0, i8 addrspace(1)* %table, i64 %key, i32 0, i32 0) [ "deopt"(i32 %pc, i64 %key, i32 3), "gc-live"(i8 addrspace(1)* %table, i8 addrspace(1)* %elem) ]
  %elem.relocated = call coldcc i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token %tok, i32 0, i32 1)
  %v = load i8, i8 addrspace(1)* %elem.relocated
  ret i8 %v
}
"""

# Modern form with a GC transition: the oldest form cannot express it.
TRANSITION = """
@flag = thread_local global i32 0
declare void @native()

define void @leave() gc "statepoint-example" {
  %tok = call token (i64, i32, void ()*, i32, i32, ...) @llvm.experimental.gc.statepoint.p0f_isVoidf(i64 0, i32 0, void ()* @native, i32 0, i32 1, i32 0, i32 0) [ "gc-transition"(i32* @flag) ]
  ret void
}
"""

# Middle form with one inline transition value, written by hand.
MIDDLE_TRANSITION = """
@flag = thread_local global i32 0
declare void @native()

define void @leave(i8 addrspace(1)* %obj) gc "statepoint-example" {
  %tok = call token (i64, i32, void ()*, i32, i32, ...) @llvm.experimental.gc.statepoint.p0f_isVoidf(i64 0, i32 0, void ()* @native, i32 0, i32 1, i32 1, i32* @flag, i32 0, i8 addrspace(1)* %obj)
  ret void
}
"""


def _cells(table, form):
    (column,) = [c for c in table.columns if c.form is form]
    return column.cells


def test_the_three_columns_of_a_statepoint_with_call_args_and_deopt_values():
    table = era_table(LOOKUP, filename="lookup.ll")
    assert [c.form for c in table.columns] == list(StatepointForm)
    assert all(c.refused is None for c in table.columns)
    oldest = _cells(table, StatepointForm.OLDEST)
    middle = _cells(table, StatepointForm.MIDDLE)
    modern = _cells(table, StatepointForm.MODERN)
    assert oldest == {
        "ID": "-", "#patch bytes": "-", "target": "arg 0 = @hash", "#call args": "arg 1 = 2", "flags": "arg 2 = 0",
        "call args": "arg 3..4", "#transition args": "-", "transition values": "-", "#deopt args": "arg 5 = 3",
        "deopt values": "arg 6..8", "GC pointers": "arg 9..10"}
    assert middle["ID"] == "arg 0 = 7" and middle["#transition args"] == "arg 7 = 0"
    assert middle["transition values"] == "(none)"
    assert middle["deopt values"] == "arg 9..11" and middle["GC pointers"] == "arg 12..13"
    assert modern["#deopt args"] == "arg 8 = 0"
    assert modern["deopt values"] == '"deopt"[0..2]' and modern["GC pointers"] == '"gc-live"[0..1]'


def test_rows_follow_the_operand_order_and_text_lists_every_row():
    table = era_table(LOOKUP)
    assert [kind for kind, _ in table.rows()] == list(OPERAND_KINDS)
    lines = table.text().splitlines()
    assert lines[0].split() == ["operands", "oldest", "middle", "modern"]
    assert len(lines) == 2 + len(OPERAND_KINDS)
    assert lines[-1].split() == ["GC", "pointers", "arg", "9..10", "arg", "12..13", '"gc-live"[0..1]']
    assert str(table) == table.text()


def test_a_form_that_cannot_express_the_call_gets_a_refused_column():
    table = era_table(TRANSITION, filename="t.ll")
    oldest = table.columns[0]
    assert oldest.form is StatepointForm.OLDEST
    assert oldest.refused is not None and "transition" in oldest.refused
    assert set(oldest.cells.values()) == {"-"}
    assert _cells(table, StatepointForm.MIDDLE)["transition values"] == "arg 6"
    assert _cells(table, StatepointForm.MODERN)["transition values"] == '"gc-transition"[0]'
    assert _cells(table, StatepointForm.MODERN)["flags"] == "arg 4 = 1"
    assert table.text().splitlines()[-1] == (
        "oldest: cannot express this call: the oldest statepoint form has no GC transition arguments")


def test_operand_cells_of_a_middle_form_statepoint_as_written():
    m = parse_module(MIDDLE_TRANSITION, "m.ll", implicit_declarations=True)
    sp = statepoints(m.get_function("leave"))[0]
    cells = operand_cells(sp)
    assert cells["#transition args"] == "arg 5 = 1"
    assert cells["transition values"] == "arg 6"
    assert cells["#deopt args"] == "arg 7 = 0" and cells["deopt values"] == "(none)"
    assert cells["GC pointers"] == "arg 8"
    assert cells["call args"] == "(none)"


def test_every_operand_of_a_layout_has_a_kind():
    m = parse_module(LOOKUP, "lookup.ll", implicit_declarations=True)
    sp = statepoints(m.get_function("lookup"))[0]
    kinds = [operand_kind(slot) for slot in statepoint_layout(sp)]
    assert None not in kinds
    assert kinds.count("deopt values") == 3 and kinds.count("GC pointers") == 2


def test_a_module_argument_is_left_untouched_and_functions_can_be_chosen():
    m = parse_module(LOOKUP + TRANSITION, "two.ll", implicit_declarations=True)
    before = str(m)
    table = era_table(m, function="leave")
    assert str(m) == before
    assert table.columns[0].refused is not None
    with pytest.raises(KeyError):
        era_table(m, function="missing")


def test_html_has_one_row_per_operand_kind():
    html = era_table(TRANSITION).html()
    assert html.count("<tr>") == 1 + len(OPERAND_KINDS)
    assert "&quot;gc-transition&quot;[0]" in html
    assert "cannot express this call" in html
    assert era_table(TRANSITION)._repr_html_() == html


def test_ir_html_never_wraps_inside_a_word():
    """JupyterLab's output area styles <pre> with white-space: pre-wrap and word-break: break-all, which
    broke 'immarg' into 'immar' + 'g' in the form switchers; the block's own style must say otherwise."""
    from gctoy.viz.html import ir_html

    page = ir_html("  %t = call token (i64 immarg, i32 immarg, ...) @llvm.experimental.gc.statepoint.p0f_isVoidf()")
    style = page.split('<pre style="', 1)[1].split('"', 1)[0]
    assert "white-space:pre;" in style and "word-break:normal" in style and "overflow-x:auto" in style
