"""gctoy.course: solution markers as nbgrader reads them, and the lab helper."""

from __future__ import annotations

import pytest

from gctoy.course import solution_regions, strip_solutions
from gctoy.labs import LabFailure, LabReport, call_student

SOURCE = """def forward(x):
    \"\"\"contract\"\"\"
    ### BEGIN SOLUTION
    return x + 1
    ### END SOLUTION
"""


def test_strip_keeps_the_indentation_of_the_marker():
    assert strip_solutions(SOURCE) == ('def forward(x):\n    """contract"""\n    # YOUR CODE HERE\n'
                                       '    raise NotImplementedError()\n')
    assert solution_regions(SOURCE) == ["    return x + 1"]


def test_stripped_source_runs_and_raises_not_implemented():
    namespace: dict = {}
    exec(strip_solutions(SOURCE), namespace)
    with pytest.raises(LabFailure, match="still the skeleton"):
        call_student(namespace["forward"], "forwarding", 1)


def test_call_student_names_a_crash_and_what_it_was_doing():
    def scan(x):
        return 1 // x
    with pytest.raises(LabFailure, match=r"scan raised ZeroDivisionError.*\n  while scanning to-space"):
        call_student(scan, "scanning to-space", 0)
    assert call_student(scan, "s", 1) == 1


def test_report_prints_its_counts():
    assert str(LabReport("cheney", ["3 programs", "12 collections"])) == "cheney: all checks passed\n  3 programs\n  12 collections"
