"""The stepper in a static page: every precomputed state and the slider-to-page links are embedded.

``ipywidgets.embed`` writes the widget state into the HTML the way the book build does; the page
then needs no kernel: the slider, the Play button and the Stack of pages are joined by jslinks
(LinkModel) that run in the browser, and every page's HTML is in the saved state.
"""
from __future__ import annotations

import json
import re

import pytest

import ipywidgets as widgets  # part of the [book] extra

from ipywidgets.embed import dependency_state, embed_data  # noqa: E402

from gctoy.widgets.stepper import safepoint_stepper  # noqa: E402


def test_every_state_and_the_links_are_in_the_saved_page():
    stepper = safepoint_stepper()
    # only this stepper's widgets (other tests in the same process may have made more)
    data = embed_data(views=[stepper], state=dependency_state([stepper]))
    state = data["manager_state"]["state"]
    models = {k: v["model_name"] for k, v in state.items()}
    links = [v for v in state.values() if v["model_name"] == "LinkModel"]
    assert links, "the slider must drive the pages through a jslink"
    stacks = [v for v in state.values() if v["model_name"] == "StackModel"]
    assert len(stacks) == 1
    pages = stacks[0]["state"]["children"]
    assert len(pages) == len(stepper.trace.states)
    # each page's HTML is in the state (no kernel needed to show it)
    html_values = [v["state"].get("value", "") for v in state.values() if v["model_name"] == "HTMLModel"]
    for s in stepper.trace.states[:3]:
        assert any(f"{s.pc:#x}" in h or f"{s.pc:x}" in h for h in html_values)
    text = json.dumps(data)
    assert "IntSliderModel" in models.values() and "PlayModel" in models.values()
    assert re.search(r'"selected_index"', text)
