"""gctoy.widgets.forms: three precomputed pages, toggle buttons linked to a Stack."""
from __future__ import annotations

import pytest

import ipywidgets as widgets  # part of the [book] extra

from ipywidgets.widgets.widget_link import Link

from gctoy.ir import parse_module
from gctoy.ir.statepoint import StatepointForm
from gctoy.widgets import FORM_ORDER, form_pages, statepoint_forms

# The relocation sequence of seed 001 (oldest form, five deopt values in front of %obj).
OLDEST = """
define i8 addrspace(1)* @test1(i8 addrspace(1)* %obj) gc "statepoint-example" {
  %0 = call i32 (void ()*, i32, i32, ...)* @llvm.experimental.gc.statepoint.p0f_isVoidf(void ()* @foo, i32 0, i32 0, i32 5, i32 0, i32 -1, i32 0, i32 0, i32 0, i8 addrspace(1)* %obj)
  %obj.relocated = call coldcc i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(i32 %0, i32 9, i32 9)
  ret i8 addrspace(1)* %obj.relocated
}
"""


def test_pages_hold_the_three_forms():
    pages = form_pages(OLDEST)
    assert [p.form for p in pages] == list(FORM_ORDER)
    oldest, middle, modern = (p.text for p in pages)
    assert "call i32 (void ()*, i32, i32, ...) @llvm.experimental.gc.statepoint" in oldest
    assert "relocate.p1i8(i32 %1, i32 9, i32 9)" in oldest
    assert "call token (i64, i32, void ()*, i32, i32, ...) @llvm.experimental.gc.statepoint" in middle
    assert "relocate.p1i8(token %1, i32 12, i32 12)" in middle
    assert '"deopt"(i32 0, i32 -1, i32 0, i32 0, i32 0)' in modern
    assert '"gc-live"(i8 addrspace(1)* %obj)' in modern
    assert "relocate.p1i8(token %1, i32 0, i32 0)" in modern
    assert [(r.name, r.base_index) for p in pages for r in p.relocations] == [
        ("%obj.relocated", 9), ("%obj.relocated", 12), ("%obj.relocated", 0)]


def test_pages_leave_a_module_argument_untouched():
    m = parse_module(OLDEST, "x.ll", implicit_declarations=True, fix_numbering=True)
    before = str(m)
    pages = form_pages(m)
    assert str(m) == before
    assert pages[0].text == before


def test_widget_stack_pages_match_the_texts():
    view = statepoint_forms(OLDEST)
    assert list(view.selector.options) == ["oldest", "middle", "modern"]
    assert len(view.stack.children) == 3
    for page, child in zip(view.pages, view.stack.children):
        assert isinstance(child, widgets.HTML)
        assert page.form.value in child.value
        # the printed IR is in the page (HTML-escaped), line by line
        for line in page.text.splitlines():
            if "@llvm.experimental.gc.relocate" in line and line.startswith("  "):
                assert line.replace('"', "&quot;") in child.value


def test_starts_on_the_requested_form():
    view = statepoint_forms(OLDEST, initial="middle")
    assert view.selector.value == "middle"
    assert view.stack.selected_index == 1


def test_jslink_connects_selector_index_to_stack():
    view = statepoint_forms(OLDEST)
    (link,) = view.links
    assert isinstance(link, Link)
    assert link.source == (view.selector, "index")
    assert link.target == (view.stack, "selected_index")


def test_python_link_moves_the_stack():
    view = statepoint_forms(OLDEST, python_link=True)
    assert len(view.links) == 2
    assert view.stack.selected_index == 2
    view.selector.value = "oldest"
    assert view.stack.selected_index == 0
    view.selector.index = 1
    assert view.stack.selected_index == 1


def test_repr_is_deterministic_and_short():
    view = statepoint_forms(OLDEST)
    assert repr(view) == "StatepointFormsView(forms=[oldest, middle, modern], selected='modern')"
    bundle = view._repr_mimebundle_()
    assert bundle["text/plain"] == repr(view)


def test_opaque_pages():
    pages = form_pages(OLDEST, opaque=True)
    assert "ptr addrspace(1) %obj" in pages[2].text
    assert pages[2].form is StatepointForm.MODERN
