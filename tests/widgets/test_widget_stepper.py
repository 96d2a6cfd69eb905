"""gctoy.widgets.stepper: the SafepointStepper (precomputed states, jslinked slider, Python buttons)."""
from __future__ import annotations

import pytest

import ipywidgets as widgets  # part of the [book] extra

from ipywidgets.widgets.widget_link import Link  # noqa: E402

from gctoy.runtime.trace import LIST3, record_trace  # noqa: E402
from gctoy.viz.machine import state_html  # noqa: E402
from gctoy.widgets.stepper import SafepointStepper, safepoint_stepper  # noqa: E402


@pytest.fixture(scope="module")
def trace():
    return record_trace(LIST3)


def test_one_page_per_state_with_the_rendered_state(trace):
    stepper = SafepointStepper(trace)
    assert len(stepper.stack.children) == len(trace.states)
    for k, state in enumerate(trace.states):
        assert stepper.page_html(k) == state_html(state, len(trace.states))
    assert stepper.slider.max == stepper.play.max == len(trace.states) - 1


def test_kernel_free_links(trace):
    stepper = SafepointStepper(trace)
    links = [(l.source, l.target) for l in stepper.links if type(l) is Link]
    assert ((stepper.play, "value"), (stepper.slider, "value")) in links
    assert ((stepper.slider, "value"), (stepper.stack, "selected_index")) in links


def test_buttons_move_the_index(trace):
    stepper = SafepointStepper(trace, python_link=True)
    kinds = [s.kind for s in trace.states]
    stepper.buttons["step"].click()
    assert stepper.index == 1 and stepper.stack.selected_index == 1
    stepper.buttons["next safepoint"].click()
    assert kinds[stepper.index] == "safepoint" and stepper.index == kinds.index("safepoint", 2)
    stepper.buttons["collect"].click()
    assert stepper.index == kinds.index("collected")
    assert stepper.stack.selected_index == stepper.index
    stepper.buttons["back"].click()
    assert stepper.index == kinds.index("collected") - 1
    stepper.buttons["collect"].click()
    stepper.buttons["collect"].click()  # no further collection: the last state
    assert stepper.index == len(kinds) - 1
    stepper.buttons["step"].click()
    assert stepper.index == len(kinds) - 1
    stepper.buttons["restart"].click()
    assert stepper.index == 0 and stepper.stack.selected_index == 0


def test_press_and_target(trace):
    stepper = SafepointStepper(trace)
    assert stepper.target("collect", 0) == trace.indices("collected")[0]
    assert stepper.press("next safepoint") == trace.indices("safepoint")[0]
    with pytest.raises(ValueError, match="no button 'jump'"):
        stepper.target("jump")


def test_repr_is_deterministic(trace):
    stepper = SafepointStepper(trace, initial=3)
    assert repr(stepper) == "SafepointStepper(states=23, collections=1, focus='main.sp2', selected=3 (safepoint))"
    assert repr(safepoint_stepper(initial=3)) == repr(stepper)


def test_initial_is_clamped_and_empty_traces_are_refused(trace):
    from dataclasses import replace

    assert SafepointStepper(trace, initial=999).index == len(trace.states) - 1
    with pytest.raises(ValueError):
        SafepointStepper(replace(trace, states=()))


def test_play_shows_its_tooltip(trace):
    """ipywidgets 8 writes a tooltip into the title only when the description is empty."""
    play = SafepointStepper(trace).play
    assert play.description == "" and "play, pause, stop and repeat" in play.tooltip


def test_kernel_only_buttons_look_different_and_say_they_need_a_kernel(trace):
    """The buttons run Python, so they do nothing in the static book: dashed, with a tooltip and a note."""
    stepper = SafepointStepper(trace)
    assert set(stepper.buttons) == {"back", "step", "next safepoint", "collect", "restart"}
    for name, button in stepper.buttons.items():
        assert button.layout.border == "1px dashed #999", name
        assert button.tooltip.endswith(" (needs a running kernel)") and len(button.tooltip) > 30, name
    # Play and the slider work without a kernel: they keep the ordinary look
    assert stepper.play.layout.border is None and stepper.slider.layout.border is None
    notes = [w.value for w in stepper.children if isinstance(w, widgets.HTML)]
    assert len(notes) == 1 and "the buttons need a running kernel" in notes[0]
    assert "play and the slider work anywhere" in notes[0]
