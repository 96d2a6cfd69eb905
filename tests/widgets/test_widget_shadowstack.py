"""The shadow-stack walker: one precomputed page per (collection, StackEntry), driven by jslinks."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

import ipywidgets as widgets  # part of the [book] extra

from ipywidgets.embed import dependency_state, embed_data  # noqa: E402

from gctoy.errors import GCToyError  # noqa: E402
from gctoy.viz.shadowstack import chain_page_html, chain_pages  # noqa: E402
from gctoy.widgets.shadowstack import ShadowStackWalker, shadow_stack_walker  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "viz"))

from test_viz_shadowstack import recorded_run, symbols  # noqa: E402


@pytest.fixture(scope="module")
def run():
    rt, shots, _ = recorded_run()
    return rt, shots


def test_pages_and_python_links(run):
    rt, shots = run
    walker = shadow_stack_walker(shots, symbols(rt), initial=2, python_link=True)
    assert isinstance(walker, ShadowStackWalker)
    assert len(walker.stack.children) == 6 and walker.stack.selected_index == 2
    walker.slider.value = 5
    assert walker.stack.selected_index == 5
    assert walker.page_html(5) == chain_page_html(shots, chain_pages(shots)[5], symbols(rt))
    assert "collection 3, entry #1 (main)" in walker.page_html(5)
    walker.play.value = 1
    assert walker.slider.value == 1 and walker.stack.selected_index == 1
    assert repr(walker) == "ShadowStackWalker(3 collections, 6 pages)"


def test_initial_is_clamped(run):
    _, shots = run
    assert ShadowStackWalker(shots, initial=99).stack.selected_index == 5
    assert ShadowStackWalker(shots, initial=-3).slider.value == 0


def test_every_page_and_the_links_are_in_the_saved_state(run):
    rt, shots = run
    walker = ShadowStackWalker(shots, symbols=symbols(rt))
    data = embed_data(views=[walker], state=dependency_state([walker]))
    state = data["manager_state"]["state"]
    links = [v["state"] for v in state.values() if v["model_name"] == "LinkModel"]
    assert len(links) == 2, "the Play button and the slider must drive the pages through jslinks"
    ids = {id_ for id_, v in state.items()}
    slider_id = walker.slider.model_id
    stack_id = walker.stack.model_id
    assert slider_id in ids and stack_id in ids
    targets = {(ln["source"][0].removeprefix("IPY_MODEL_"), ln["source"][1],
                ln["target"][0].removeprefix("IPY_MODEL_"), ln["target"][1]) for ln in links}
    assert (slider_id, "value", stack_id, "selected_index") in targets
    pages = state[stack_id]["state"]["children"]
    assert len(pages) == 6
    saved = [state[p.removeprefix("IPY_MODEL_")]["state"]["value"] for p in pages]
    assert saved == [walker.page_html(i) for i in range(6)]
    assert all("the walk is here" in h for h in saved)


def test_no_collections_is_an_error():
    with pytest.raises(GCToyError, match="no collections"):
        ShadowStackWalker([])


def test_play_shows_its_tooltip(run):
    """ipywidgets 8 writes a tooltip into the title only when the description is empty."""
    _, shots = run
    play = ShadowStackWalker(shots).play
    assert play.description == "" and "walk the chain" in play.tooltip
