"""The lab cell of a chapter as the lab tests use it: the instructor's solution, the student's
skeleton (the solution stripped as nbgrader strips it), and the solution with one line changed into
a plausible mistake, each executed into a fresh namespace."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from course_notebooks import NOTEBOOKS
from gctoy.course import Lab, load_chapter, strip_solutions
from gctoy.labs import LabFailure


class LabCell:
    """The lab of chapter ``number`` ("12"); ``name`` is the function the student writes."""

    def __init__(self, number: str, name: str) -> None:
        (self.path,) = sorted(NOTEBOOKS.glob(f"{number}_*.ipynb"))
        self.name = name

    @property
    def lab(self) -> Lab:
        return load_chapter(self.path).labs()[0]

    @property
    def source(self) -> str:
        return self.lab.source

    def function(self, source: str) -> Callable[..., Any]:
        namespace: dict[str, Any] = {}
        exec(compile(source, f"<lab of {self.path.name}>", "exec"), namespace)
        return namespace[self.name]

    def solution(self) -> Callable[..., Any]:
        return self.function(self.source)

    def skeleton(self) -> Callable[..., Any]:
        return self.function(strip_solutions(self.source))

    def mutated(self, old: str, new: str) -> Callable[..., Any]:
        """The solution with ``old`` replaced by ``new`` (a plausible mistake)."""
        source = self.source
        assert old in source, f"the solution no longer contains {old!r}"
        return self.function(source.replace(old, new))


def failure(check: Callable[..., Any], *functions: Callable[..., Any]) -> str:
    """The message of the LabFailure that ``check(*functions)`` must raise."""
    with pytest.raises(LabFailure) as failed:
        check(*functions)
    return str(failed.value)
