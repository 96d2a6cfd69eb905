"""gctoy.widgets.rs4gc: the RS4GC phase stepper (precomputed pages, Play/slider jslinked to a Stack)."""
from __future__ import annotations

import html

import pytest

import ipywidgets as widgets  # part of the [book] extra

from ipywidgets.widgets.widget_link import Link

from gctoy.passes.rewrite_statepoints import RS4GCOptions
from gctoy.passes.rs4gc_trace import trace_rs4gc
from gctoy.viz import has_dot
from oracles import DOT
from gctoy.widgets import RS4GCStepper, rs4gc_stepper

# A loop whose pointer is a phi of two derived pointers, passed to an invoke.
SRC = """
declare i8 addrspace(1)* @bar(i8 addrspace(1)*)
declare i32 @__gxx_personality_v0(...)
define i8 addrspace(1)* @f(i1 %c, i8 addrspace(1)* %a, i8 addrspace(1)* %b, i64 %n) gc "statepoint-example" personality i32 (...)* @__gxx_personality_v0 {
entry:
  %a1 = getelementptr i8, i8 addrspace(1)* %a, i64 8
  %b1 = getelementptr i8, i8 addrspace(1)* %b, i64 16
  br i1 %c, label %loop, label %other
other:
  br label %loop
loop:
  %p = phi i8 addrspace(1)* [ %a1, %entry ], [ %b1, %other ], [ %p.next, %cont ]
  %i = phi i64 [ 0, %entry ], [ 0, %other ], [ %i.next, %cont ]
  %q = invoke i8 addrspace(1)* @bar(i8 addrspace(1)* %p) to label %cont unwind label %lpad
cont:
  %p.next = getelementptr i8, i8 addrspace(1)* %p, i64 1
  %i.next = add i64 %i, 1
  %done = icmp eq i64 %i.next, %n
  br i1 %done, label %exit, label %loop
exit:
  ret i8 addrspace(1)* %q
lpad:
  %lp = landingpad token cleanup
  ret i8 addrspace(1)* null
}
"""


@pytest.fixture(scope="module")
def stepper() -> RS4GCStepper:
    return rs4gc_stepper(SRC, "f", python_link=True)


def test_one_page_per_phase(stepper):
    snaps = trace_rs4gc(SRC, "f")
    assert len(stepper.stack.children) - 1 == len(stepper.pages) == len(snaps) == 7
    assert stepper.phases == [s.phase for s in snaps]
    # the slider counts as the pages do: "phase 1 of 7" is slider value 1
    assert (stepper.slider.min, stepper.slider.max) == (1, 7)
    assert (stepper.play.min, stepper.play.max) == (1, 7)
    assert stepper.stack.children[0].value == stepper.stack.children[1].value   # the copy no slider value reaches


def test_each_page_shows_its_phase_summary(stepper):
    for k, snap in enumerate(trace_rs4gc(SRC, "f")):
        page = stepper.page_html(k)
        assert isinstance(stepper.stack.children[k + 1], widgets.HTML)
        assert html.escape(snap.summary()) in page
        assert f"phase {k + 1} of 7: {snap.phase}" in page
        assert html.escape(snap.note) in page


@pytest.mark.skipif(not has_dot(), reason=f"missing {DOT}: Graphviz's dot is not on the PATH (apt-get install graphviz)")
def test_pages_hold_svg_drawn_from_that_phase(stepper):
    for k, page in enumerate(stepper.pages):
        assert page.svg is not None and page.svg.startswith("<svg")
        assert page.svg in stepper.page_html(k)
        assert "<?xml" not in page.svg and "<!--" not in page.svg
    # the base phi appears in the drawing from the "bases" phase on, not before
    assert "%p.base = phi" not in stepper.pages[1].svg
    assert "%p.base = phi" in stepper.pages[2].svg


def test_without_dot_the_page_falls_back_to_the_ir():
    view = rs4gc_stepper(SRC, "f", render=False)
    page = view.page_html(5)
    assert "<svg" not in page
    assert html.escape("%statepoint_token = invoke token") in page


def test_jslinks_chain_play_slider_and_stack():
    view = rs4gc_stepper(SRC, "f", render=False)
    assert len(view.links) == 2 and all(isinstance(x, Link) for x in view.links)
    assert view.links[0].source == (view.play, "value") and view.links[0].target == (view.slider, "value")
    assert view.links[1].source == (view.slider, "value")
    assert view.links[1].target == (view.stack, "selected_index")


def test_play_shows_its_tooltip(stepper):
    """ipywidgets 8 writes a tooltip into the title only when the description is empty."""
    assert stepper.play.description == "" and "show the phases" in stepper.play.tooltip


def test_kernel_side_links_turn_the_page(stepper):
    stepper.slider.value = 4
    assert stepper.stack.selected_index == 4 and "phase 4 of 7" in stepper.stack.children[4].value
    stepper.play.value = 7
    assert stepper.slider.value == 7 and stepper.stack.selected_index == 7
    assert "phase 7 of 7" in stepper.stack.children[stepper.stack.selected_index].value
    stepper.slider.value = 1


def test_repr_is_deterministic():
    a = rs4gc_stepper(SRC, "f", render=False, initial=2)
    b = rs4gc_stepper(SRC, "f", render=False, initial=2)
    assert repr(a) == repr(b) == "RS4GCStepper(function='@f', phases=7, selected=2 (bases))"
    assert a._repr_mimebundle_()["text/plain"] == repr(a)
    assert [p.html() for p in a.pages] == [p.html() for p in b.pages]


def test_non_relocating_mode_has_no_use_rewriting_page():
    view = rs4gc_stepper(SRC, "f", RS4GCOptions(non_relocating=True), render=False)
    assert view.phases[-1] == "statepoints" and len(view.pages) == 6


def test_an_empty_page_list_is_refused():
    with pytest.raises(ValueError):
        RS4GCStepper([])
