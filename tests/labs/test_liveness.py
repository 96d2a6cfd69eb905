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
    report = str(liveness.check(_function(_lab_source())))
    assert "calls" in report
    assert "under GC stress" in report and "heap verified" in report
    line = liveness.llvm14_agreement(_function(_lab_source()))
    assert "LLVM 14" in line  # its live sets where opt 14 is installed; a line saying it is not otherwise


def _phi_bug() -> str:
    """The lab's solution with a phi's inputs counted as uses in the phi's own block."""
    wrong = _replace(
        _lab_source(),
        "            if not isinstance(inst, I.Phi):\n                live.update(",
        "            if True:\n                live.update(",
    )
    return _replace(wrong, "if pred is block and tracked(v)", "if False")


def test_phi_uses_at_the_top_of_the_block_fail_and_say_why():
    """The bug: a phi's inputs counted as uses in the phi's block, so they are live on every incoming path."""
    wrong = _phi_bug()
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


def _no_fixed_point() -> str:
    return _replace(_lab_source(), "                changed = True\n    result", "                pass\n    result")


def test_without_llvm_the_lab_says_so_and_uses_gctoy(monkeypatch):
    import gctoy.llvm_tools

    monkeypatch.setattr(gctoy.llvm_tools, "tool_path", lambda name, version: None)
    assert "calls" in str(liveness.check(_function(_lab_source()), generated=2))
    line = liveness.llvm14_agreement(_function(_lab_source()))
    assert "LLVM 14 not installed" in line and "gctoy's RS4GC liveness" in line


def test_no_fixed_point_fails_under_gc_stress_and_says_why():
    """The one-pass bug plugged into RS4GC: %bi is not relocated in the loop, the program reads a moved object."""
    with pytest.raises(LabFailure) as failure:
        liveness.stress_run(_function(_no_fixed_point()))
    message = str(failure.value)
    assert "under GC stress" in message and "without a collector" in message
    assert "lacks %bi" in message and "does not relocate it" in message


def test_phi_uses_at_the_top_of_the_block_fail_under_gc_stress_and_say_why():
    """The phi bug plugged into RS4GC: a statepoint relocates a value not yet defined (undef after mem2reg)."""
    wrong = _phi_bug()
    with pytest.raises(LabFailure) as failure:
        liveness.stress_run(_function(wrong))
    message = str(failure.value)
    assert "relocates undef" in message and "also holds %x" in message and "own edge" in message
