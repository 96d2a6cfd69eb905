"""The chapter 03 lab (gctoy.labs.base_pointers): its check fails on the skeleton, passes on the
reference solution, and fails with a message that teaches on a plausible wrong solution."""

from __future__ import annotations

import pytest

from course_notebooks import NOTEBOOKS
from gctoy.course import load_chapter, strip_solutions
from gctoy.labs import LabFailure, base_pointers

CHAPTER = NOTEBOOKS / "03_Base_and_derived_pointers.ipynb"


def _lab_source() -> str:
    (lab,) = load_chapter(CHAPTER).labs()
    assert lab.module == "gctoy.labs.base_pointers"
    return lab.source


def _function(source: str):
    namespace: dict = {}
    exec(compile(source, "lab", "exec"), namespace)
    return namespace["find_bases"]


def _first_input_wins() -> str:
    """The plausible bug: a phi of two different bases takes its first input's base (never Conflict)."""
    source = _lab_source()
    wrong = source.replace("        return CONFLICT\n\n    changed = True", "        return a\n\n    changed = True")
    assert wrong != source, "the reference solution's meet changed: update this test's wrong solution"
    return wrong


def test_skeleton_fails():
    with pytest.raises(LabFailure, match="skeleton"):
        base_pointers.check(_function(strip_solutions(_lab_source())))


def test_solution_passes():
    report = base_pointers.check(_function(_lab_source()))
    text = str(report)
    assert "GC pointers" in text and "collections" in text


def test_first_input_base_fails_and_says_why():
    with pytest.raises(LabFailure) as failure:
        base_pointers.check(_function(_first_input_wins()))
    message = str(failure.value)
    assert "Conflict" in message and "base phi" in message and "different objects" in message


def test_wrong_bases_break_the_program_under_gc_stress():
    with pytest.raises(LabFailure) as failure:
        base_pointers._stress_run(_function(_first_input_wins()))
    assert "GC stress" in str(failure.value) and "wrong object" in str(failure.value)


def test_the_examples_cover_every_kind_of_answer():
    labels = [label for text, function in [(t, f) for _, t, f in base_pointers.EXAMPLES]
              for label in base_pointers.gctoy_bases(text, function).values()]
    assert any(label.startswith("a new base phi") for label in labels)
    assert any(label.startswith("null") for label in labels)
    assert any(label.startswith("%") for label in labels)


def test_llvm14_agreement_says_what_it_compared():
    line = base_pointers.llvm14_agreement()
    assert line.startswith("LLVM 14 not installed") or " the same " in line, line
