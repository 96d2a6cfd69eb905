"""Lab of chapter 12 (gctoy.labs.write_barrier): the check fails on the skeleton, passes on the
notebook's solution, and fails with a message that teaches on plausible wrong barriers."""

from __future__ import annotations

import pytest

from gctoy.labs import LabFailure, write_barrier
from lab_cells import LabCell, failure

LAB = LabCell("12", "write_barrier")
_mutated = LAB.mutated


def _failure(function) -> str:
    return failure(write_barrier.check, function)


def test_the_lab_cell_names_its_module():
    lab = LAB.lab
    assert lab.module == "gctoy.labs.write_barrier" and ".check(write_barrier)" in lab.check_source


def test_check_fails_on_the_skeleton():
    with pytest.raises(LabFailure, match="still the skeleton"):
        write_barrier.check(LAB.skeleton())


def test_check_passes_on_the_solution():
    text = str(write_barrier.check(LAB.solution()))
    assert "3 programs" in text and "old -> young references" in text and "gctoy-cardmark" in text
    assert "young collections" in text and "heap verified" in text


def test_marking_the_card_of_the_stored_value_is_explained():
    message = _failure(_mutated("index = (obj - HEAP_BASE) >> CARD_SHIFT", "index = (value - HEAP_BASE) >> CARD_SHIFT"))
    assert "card of the stored value" in message and "is clean" in message and "young collection" in message


def test_marking_the_card_of_the_field_is_explained():
    message = _failure(_mutated("index = (obj - HEAP_BASE) >> CARD_SHIFT", "index = (field - HEAP_BASE) >> CARD_SHIFT"))
    assert "card of the field" in message and "card of the object" in message


def test_forgetting_the_spare_card_is_explained():
    message = _failure(_mutated("    if not 0 <= index < CARD_COUNT:\n        index = CARD_COUNT\n", ""))
    assert "outside the table" in message and "spare card" in message


def test_a_barrier_that_marks_too_much_is_explained():
    extra = _mutated("    cards[index] = CARD_DIRTY",
                     "    cards[index] = CARD_DIRTY\n    if HEAP_BASE <= value:\n"
                     "        cards[min((value - HEAP_BASE) >> CARD_SHIFT, CARD_COUNT)] = CARD_DIRTY")
    message = _failure(extra)
    assert "Dirty cards no store wrote an object in" in message


def test_a_filtering_barrier_is_held_to_the_unconditional_contract():
    """Marking only stores of young values into old objects leaves the young -> old store's card clean."""
    source = LAB.source.replace("    cards[index] = CARD_DIRTY",
                                   "    if value > obj:\n        cards[index] = CARD_DIRTY")
    message = _failure(LAB.function(source))
    assert "unconditional" in message


def test_the_brute_force_scan_finds_old_to_young_references():
    run = write_barrier._GctoyRun(write_barrier.CARDS)
    run.go()
    found = write_barrier.old_to_young(run.heap, run.boundary)
    assert len(found) == 2 and all(obj < run.boundary <= value for obj, _, value in found)


def test_marking_the_card_of_the_stored_value_fails_under_gc_stress():
    """The young collection trusts the cards: the old object on a clean card keeps a freed young object."""
    message = _failure(_mutated("index = (obj - HEAP_BASE) >> CARD_SHIFT", "index = (value - HEAP_BASE) >> CARD_SHIFT"))
    assert "under GC stress" in message and "young collection freed" in message
    assert "the card of the stored value" in message


def test_the_young_collection_frees_what_no_dirty_card_or_root_reaches():
    run = write_barrier._StudentRun(write_barrier.BIG, lambda cards, obj, field, value: None)
    run.go()
    assert run.young.collections == 4
    dangling = run.young.dangling()
    assert {value for _, _, value in dangling} <= run.young.freed and len(dangling) == 2
