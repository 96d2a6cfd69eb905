"""gctoy.viz.statepoint and gctoy.viz.html: operand tables and coloured IR text."""
from __future__ import annotations

from gctoy.ir import parse_module
from gctoy.ir.statepoint import StatepointForm, convert_statepoints, statepoints
from gctoy.viz import layout_text, statepoint_layout
from gctoy.viz.html import ir_html

# The relocation sequence of seed 000, "Explicit Representation" (renumbered %0 -> %1).
MIDDLE = """
define i8 addrspace(1)* @test1(i8 addrspace(1)* %obj) gc "statepoint-example" {
  %1 = call token (i64, i32, void ()*, i32, i32, ...)* @llvm.experimental.gc.statepoint.p0f_isVoidf(i64 0, i32 0, void ()* @foo, i32 0, i32 0, i32 0, i32 0, i8 addrspace(1)* %obj)
  %obj.relocated = call coldcc i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token %1, i32 7, i32 7)
  ret i8 addrspace(1)* %obj.relocated
}
"""

# A middle-form call with arguments, a transition value and deopt values in front of two GC pointers.
BUSY = """
define void @f(i8 addrspace(1)* %a, i8 addrspace(1)* %b) gc "statepoint-example" {
  %t = call token (i64, i32, void (i32, i32)*, i32, i32, ...) @llvm.experimental.gc.statepoint.p0f_isVoidi32i32f(i64 5, i32 0, void (i32, i32)* @g, i32 2, i32 0, i32 10, i32 20, i32 1, i32 99, i32 3, i32 7, i32 8, i32 9, i8 addrspace(1)* %a, i8 addrspace(1)* %b)
  %b.rel = call coldcc i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token %t, i32 14, i32 14)
  ret void
}
declare void @g(i32, i32)
"""


def _sp(text):
    m = parse_module(text, "x.ll", implicit_declarations=True, fix_numbering=True)
    return m, statepoints(next(m.definitions()))[0]


def test_middle_layout_puts_the_first_gc_pointer_at_7():
    _, sp = _sp(MIDDLE)
    rows = statepoint_layout(sp)
    assert [r.role for r in rows] == ["ID", "#patch bytes", "target", "#call args", "flags",
                                      "#transition args", "#deopt args", "GC pointer"]
    assert [r.index for r in rows] == list(range(8))
    assert rows[-1].operand == "i8 addrspace(1)* %obj" and rows[-1].relocate_index == 7
    assert all(r.relocate_index is None for r in rows[:-1])


def test_oldest_layout_names_the_third_operand_unused_as_seed_001_does():
    """Seed 001's syntax block: "func_type <target>, i64 <#call args>. i64 <unused>, ..."."""
    m, _ = _sp(MIDDLE)
    convert_statepoints(m, "oldest")
    rows = statepoint_layout(statepoints(next(m.definitions()))[0])
    assert [r.role for r in rows] == ["target", "#call args", "<unused>", "#deopt args", "GC pointer"]
    assert "flags" not in layout_text(statepoints(next(m.definitions()))[0])


def test_every_form_agrees_with_relocate_index():
    m, _ = _sp(MIDDLE)
    expect = {StatepointForm.OLDEST: 4, StatepointForm.MIDDLE: 7, StatepointForm.MODERN: 0}
    for form, index in expect.items():
        convert_statepoints(m, form)
        sp = statepoints(next(m.definitions()))[0]
        gc_rows = [r for r in statepoint_layout(sp) if r.relocate_index is not None]
        assert [r.relocate_index for r in gc_rows] == [index]
        assert sp.relocates()[0].base_index == index


def test_modern_layout_lists_bundle_operands():
    m, _ = _sp(MIDDLE)
    convert_statepoints(m, "modern")
    rows = statepoint_layout(statepoints(next(m.definitions()))[0])
    assert rows[5].role == "#transition args (always 0)" and rows[6].role == "#deopt args (always 0)"
    assert rows[-1].where == '"gc-live"[0]' and rows[-1].index is None and rows[-1].relocate_index == 0


def test_busy_layout_counts_every_section():
    _, sp = _sp(BUSY)
    rows = statepoint_layout(sp)
    roles = [r.role for r in rows]
    assert roles[5:7] == ["call arg 0", "call arg 1"]
    assert roles[7:9] == ["#transition args", "transition value 0"]
    assert roles[9:13] == ["#deopt args", "deopt value 0", "deopt value 1", "deopt value 2"]
    assert [(r.operand, r.relocate_index) for r in rows if r.relocate_index is not None] == [
        ("i8 addrspace(1)* %a", 13), ("i8 addrspace(1)* %b", 14)]
    assert sp.relocates()[0].derived is sp.call.args[14]


def test_layout_text_is_a_table():
    _, sp = _sp(MIDDLE)
    lines = layout_text(sp).splitlines()
    assert lines[0].split() == ["position", "role", "operand", "relocate", "index"]
    assert lines[-1].split()[:2] == ["arg", "7"] and lines[-1].endswith("%obj  7")
    assert len(lines) == 2 + 8
    opaque = layout_text(sp, opaque=True)
    assert "ptr addrspace(1) %obj" in opaque


def test_ir_html_colours_intrinsic_calls_only():
    m, _ = _sp(MIDDLE)
    out = ir_html(str(m), caption="<b>x</b>")
    assert out.startswith("<div><b>x</b></div><pre")
    assert out.count('<span style="background:#fde4a6;color:#1a1a1a">') == 1
    assert out.count('<span style="color:#1b7a3a">') == 1
    # declarations name the intrinsics too, but are not instruction lines
    assert "\ndeclare token @llvm.experimental.gc.statepoint" in out
    assert "&quot;statepoint-example&quot;" in out
