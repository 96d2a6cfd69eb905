"""Button pages, and chapter 00's collection with and without the stack map."""

from __future__ import annotations

import pytest

from gctoy.runtime.no_roots import with_and_without_stack_map
from gctoy.widgets.pages import ButtonPages, outcome_html
from test_workbench import PROGRAM   # one object kept across a collection, its field 42 printed



def test_without_the_stack_map_the_program_reads_the_poisoned_old_space():
    with_map, without = with_and_without_stack_map(PROGRAM)
    assert with_map.printed == (42,) and with_map.objects_copied == 1 and with_map.error is None
    assert without.collections == 1 and without.objects_copied == 0
    assert [v & 0xFFFFFFFFFFFFFFFF for v in without.printed] == [0xDEADBEEFDEADBEEF]
    page = outcome_html(without, [42])
    assert "the poison word" in page and "rgba(220,50,50" in page
    assert "rgba(40,180,60" in outcome_html(with_map, [42])


def test_buttons_turn_the_pages():
    pages = ButtonPages({"a": "<p>A</p>", "b": "<p>B</p>"}, python_link=True)
    assert pages.stack.selected_index == 0
    pages.buttons.value = "b"
    assert pages.stack.selected_index == 1 and pages.stack.children[1].value == "<p>B</p>"
    with pytest.raises(ValueError):
        ButtonPages({})


def test_slider_pages_count_from_one():
    from gctoy.widgets.pages import SliderPages

    pages = SliderPages(["<p>1</p>", "<p>2</p>", "<p>3</p>"], python_link=True)
    assert pages.slider.min == 1 and pages.slider.max == 3 and pages.stack.selected_index == 1
    pages.slider.value = 3
    assert pages.stack.selected_index == 3 and pages.page(3) == "<p>3</p>"
    pages.play.value = 2
    assert pages.slider.value == 2 and pages.stack.children[pages.stack.selected_index].value == "<p>2</p>"


def test_slider_pages_can_count_from_zero():
    from gctoy.widgets.pages import SliderPages

    pages = SliderPages(["<p>0</p>", "<p>1</p>"], first=0, python_link=True)
    assert (pages.slider.min, pages.slider.max, len(pages.stack.children)) == (0, 1, 2)
    pages.slider.value = 1
    assert pages.page(pages.stack.selected_index) == "<p>1</p>"
    with pytest.raises(ValueError):
        SliderPages(["x"], first=2)


def test_slider_pages_play_shows_its_tooltip():
    """ipywidgets 8 writes a tooltip into the title only when the description is empty."""
    from gctoy.widgets.pages import SliderPages

    play = SliderPages(["<p>1</p>", "<p>2</p>"]).play
    assert play.description == "" and play.tooltip == "play: turn the pages one by one"
