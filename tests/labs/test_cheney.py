"""The chapter 09 lab: Cheney's forward and scan, plugged into the runtime's collector.

The check must fail on the skeleton the student gets, pass on the reference solution, and fail
with a message that teaches on plausible wrong solutions."""

from __future__ import annotations

import pytest

from course_notebooks import NOTEBOOKS
from gctoy.course import load_chapter, strip_solutions
from gctoy.labs import LabFailure, cheney

CHAPTER = NOTEBOOKS / "09_A_moving_collector_at_work.ipynb"


def _lab_namespace(source: str) -> dict:
    namespace: dict = {}
    exec(compile(source, "<lab cell>", "exec"), namespace)
    return namespace


@pytest.fixture(scope="module")
def lab():
    labs = load_chapter(CHAPTER).labs()
    assert [x.module for x in labs] == ["gctoy.labs.cheney"]
    return labs[0]


@pytest.fixture(scope="module")
def solution(lab):
    return _lab_namespace(lab.source)


def test_check_fails_on_the_skeleton(lab):
    skeleton = _lab_namespace(strip_solutions(lab.source))
    with pytest.raises(LabFailure, match="still the skeleton"):
        cheney.check(skeleton["forward"], skeleton["scan"])


def test_check_passes_on_the_solution(solution):
    report = cheney.check(solution["forward"], solution["scan"])
    text = str(report)
    assert "3 programs" in text and "collections under stress" in text and "objects moved" in text


# Plausible wrong solutions -------------------------------------------------------------


def forward_without_forwarding_pointer(spaces, ptr):
    """Copies, but never leaves the new address behind: a second reference copies again."""
    if not spaces.in_from_space(ptr):
        return ptr
    word = spaces.read(ptr - 8)
    if not word & 1:
        return word
    start = spaces.copy(ptr - 16, 16 + 8 * (word >> 1))
    return start + 16


def forward_ignoring_forwarding_pointers(spaces, ptr):
    """Leaves a forwarding pointer but never looks for one: reads it as a field count."""
    if not spaces.in_from_space(ptr):
        return ptr
    word = spaces.read(ptr - 8)
    start = spaces.copy(ptr - 16, 16 + 8 * (word >> 1))
    spaces.write(ptr - 8, start + 16)
    return start + 16


def forward_returning_the_header_address(spaces, ptr):
    """Returns where the copy starts (its mask word), not its field 0."""
    if not spaces.in_from_space(ptr):
        return ptr
    word = spaces.read(ptr - 8)
    if not word & 1:
        return word
    start = spaces.copy(ptr - 16, 16 + 8 * (word >> 1))
    spaces.write(ptr - 8, start)
    return start


def forward_without_null_check(spaces, ptr):
    """Treats every value as an object, null included."""
    word = spaces.read(ptr - 8)
    if not word & 1:
        return word
    start = spaces.copy(ptr - 16, 16 + 8 * (word >> 1))
    spaces.write(ptr - 8, start + 16)
    return start + 16


def scan_up_to_the_first_free(spaces, forward):
    """Reads spaces.free once: the objects copied during the scan are never scanned."""
    cursor, end = spaces.to_base, spaces.free
    while cursor < end:
        mask, n = spaces.read(cursor), spaces.read(cursor + 8) >> 1
        for i in range(n):
            if mask >> i & 1:
                at = cursor + 16 + 8 * i
                spaces.write(at, forward(spaces, spaces.read(at)))
        cursor += 16 + 8 * n


def scan_that_never_advances(spaces, forward):
    """Forgets to move the scan pointer past the object."""
    cursor = spaces.to_base
    while cursor < spaces.free:
        mask, n = spaces.read(cursor), spaces.read(cursor + 8) >> 1
        for i in range(n):
            if mask >> i & 1:
                at = cursor + 16 + 8 * i
                spaces.write(at, forward(spaces, spaces.read(at)))


@pytest.mark.parametrize("wrong_forward, words", [
    (forward_without_forwarding_pointer, ["copied twice", "forwarding pointer", "p - 8"]),
    (forward_ignoring_forwarding_pointers, ["tag bit 0", "forwarding pointer", "copied already"]),
    (forward_returning_the_header_address, ["header word", "field 0", "HEADER_SIZE"]),
    (forward_without_null_check, ["Null", "unchanged", "in_from_space"]),
])
def test_a_wrong_forward_fails_with_a_message_that_teaches(solution, wrong_forward, words):
    with pytest.raises(LabFailure) as failure:
        cheney.check(wrong_forward, solution["scan"])
    for word in words:
        assert word in str(failure.value), str(failure.value)


@pytest.mark.parametrize("wrong_scan, words", [
    (scan_up_to_the_first_free, ["still holds a from-space address", "spaces.free", "copied while scanning",
                                 "not an object in the current space"]),
    (scan_that_never_advances, ["does not end", "scan pointer must move"]),
])
def test_a_wrong_scan_fails_with_a_message_that_teaches(solution, wrong_scan, words):
    with pytest.raises(LabFailure) as failure:
        cheney.check(solution["forward"], wrong_scan)
    for word in words:
        assert word in str(failure.value), str(failure.value)



# A collector that forgets derived pointers -------------------------------------------------


def rebase_forgetting_derived_pointers(old_base, new_base, old_derived):
    """Leaves the derived slot as it was: it still points into from-space after the collection."""
    return old_derived


def rebase_to_the_base(old_base, new_base, old_derived):
    """Gives the derived slot its base's new address: the offset into the object is lost."""
    return new_base


def test_the_solution_rebases_the_derived_slots(solution):
    text = str(cheney.check(solution["forward"], solution["scan"], solution["rebase_derived"]))
    assert "derived slots rebased by your rebase_derived" in text and "collections under stress" in text


def test_the_skeleton_rebase_fails(lab):
    skeleton = _lab_namespace(strip_solutions(lab.source))
    solution = _lab_namespace(lab.source)
    with pytest.raises(LabFailure, match="rebase_derived is still the skeleton"):
        cheney.check(solution["forward"], solution["scan"], skeleton["rebase_derived"])


@pytest.mark.parametrize("wrong_rebase, words", [
    (rebase_forgetting_derived_pointers, ["returned 70 with your collector", "still points into from-space",
                                          "new base + (old derived - old base)", "forgets derived pointers"]),
    (rebase_to_the_base, ["failed under GC stress", "the slot must get", "moves with its base"]),
])
def test_a_collector_that_forgets_derived_pointers_fails_with_a_message_that_teaches(solution, wrong_rebase, words):
    """The issue's example: the stress run of the chapter's list (a derived pointer live across its calls) fails."""
    with pytest.raises(LabFailure) as failure:
        cheney.check(solution["forward"], solution["scan"], wrong_rebase)
    message = str(failure.value)
    assert "list3 (a derived pointer)" in message
    for word in words:
        assert word in message, message
