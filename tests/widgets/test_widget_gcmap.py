"""The safe point chooser: one precomputed page per kind, buttons joined to the pages by a jslink."""
from __future__ import annotations

import pytest

import ipywidgets as widgets  # part of the [book] extra

from ipywidgets.embed import dependency_state, embed_data  # noqa: E402

from gctoy.codegen import compile_module  # noqa: E402
from gctoy.errors import GCToyError  # noqa: E402
from gctoy.ir import parse_module  # noqa: E402
from gctoy.viz.gcmap import kind_pages  # noqa: E402
from gctoy.widgets.gcmap import SafePointChooser  # noqa: E402

SRC = """declare void @print_i64(i64)
define void @spin(i64 %n) gc "gctoy-gcmap" {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i1, %loop ]
  call void @print_i64(i64 %i)
  %i1 = add i64 %i, 1
  %more = icmp ult i64 %i1, %n
  br i1 %more, label %loop, label %done
done:
  ret void
}
"""


@pytest.fixture(scope="module")
def compiled():
    return compile_module(parse_module(SRC))


def test_pages_are_the_core_pages(compiled):
    chooser = SafePointChooser(compiled, "spin")
    assert [p.html() for p in kind_pages(compiled, "spin")] == [c.value for c in chooser.stack.children]
    assert chooser.buttons.options == ("Loop", "Return", "PreCall", "PostCall", "all four")
    assert chooser.stack.selected_index == chooser.buttons.index == 4
    assert "&lt;- <b>Loop</b>" in chooser.page_html("Loop") and "PreCall" not in chooser.page_html("Loop")
    assert repr(chooser) == "SafePointChooser(@spin, 5 pages)"


def test_python_link_switches_pages(compiled):
    chooser = SafePointChooser(compiled, "spin", initial="Return", python_link=True)
    assert chooser.stack.selected_index == 1
    chooser.buttons.index = 3
    assert chooser.stack.selected_index == 3


def test_bad_names_are_errors(compiled):
    with pytest.raises(GCToyError, match="no page 'Nope'"):
        SafePointChooser(compiled, "spin", initial="Nope")
    with pytest.raises(GCToyError, match="no page 'x'"):
        SafePointChooser(compiled, "spin").page_html("x")


def test_the_saved_page_holds_every_page_and_the_link(compiled):
    chooser = SafePointChooser(compiled, "spin")
    data = embed_data(views=[chooser], state=dependency_state([chooser]))
    state = data["manager_state"]["state"]
    links = [v for v in state.values() if v["model_name"] == "LinkModel"]
    assert len(links) == 1
    ends = {tuple(links[0]["state"]["source"])[1], tuple(links[0]["state"]["target"])[1]}
    assert ends == {"index", "selected_index"}
    html_values = [v["state"].get("value", "") for v in state.values() if v["model_name"] == "HTMLModel"]
    for page in chooser.pages:
        assert page.html() in html_values
