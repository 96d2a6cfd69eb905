"""The chapter 04 lab (gctoy.labs.liveness): its check fails on the skeleton, passes on the reference
solution, and fails with a message that teaches on two plausible wrong solutions."""

from __future__ import annotations

import pytest

from course_notebooks import NOTEBOOKS
from gctoy.course import load_chapter, strip_solutions
from gctoy.labs import LabFailure, liveness

CHAPTER = NOTEBOOKS / "04_RewriteStatepointsForGC.ipynb"


def _lab_source() -> str:
    (lab,) = load_chapter(CHAPTER).labs()
    assert lab.module == "gctoy.labs.liveness"
    return lab.source


def _function(source: str):
    namespace: dict = {}
    exec(compile(source, "lab", "exec"), namespace)
    return namespace["live_across"]


def _replace(source: str, old: str, new: str) -> str:
    assert old in source, f"the reference solution changed: update this test ({old!r})"
    return source.replace(old, new)


def test_skeleton_fails():
    with pytest.raises(LabFailure, match="skeleton"):
        liveness.check(_function(strip_solutions(_lab_source())))


def test_solution_passes():
    assert "calls" in str(liveness.check(_function(_lab_source())))


def test_phi_uses_at_the_top_of_the_block_fail_and_say_why():
    """The bug: a phi's inputs counted as uses in the phi's block, so they are live on every incoming path."""
    wrong = _replace(_lab_source(), "            if not isinstance(inst, I.Phi):\n                live.update(",
                     "            if True:\n                live.update(")
    wrong = _replace(wrong, "if pred is block and tracked(v)", "if False")
    with pytest.raises(LabFailure) as failure:
        liveness.check(_function(wrong))
    message = str(failure.value)
    assert "extra" in message and "edge" in message and "statepoint" in message


def test_no_fixed_point_fails_and_says_why():
    """The bug: one backward pass over the blocks, so values used after a loop's back edge are missed."""
    wrong = _replace(_lab_source(), "                changed = True\n    result", "                pass\n    result")
    with pytest.raises(LabFailure) as failure:
        liveness.check(_function(wrong))
    message = str(failure.value)
    assert "missing" in message and "back edge" in message
