"""Run a released (student) chapter with extra cells after each check: every plausible wrong answer,
then the instructor's answer, each followed by the check again.  One kernel per chapter."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import nbformat
from nbclient import NotebookClient

from gctoy.course import Chapter

from course_notebooks import code_cell

PROBE = "gctoy_probe"


def _grade_id(cell: dict[str, Any]) -> str | None:
    return cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")


def probed_notebook(student: dict[str, Any], instructor: Chapter) -> dict[str, Any]:
    """The student notebook with, after each exercise's check, one cell per wrong answer and one with the solution."""
    by_check = {}
    for exercise in instructor.exercises():
        check_id = _grade_id(instructor.cells[exercise.check_index])
        probes = [code_cell(f"{wrong}\n{exercise.check_source}", **{PROBE: {"exercise": exercise.number,
                                                                             "expect": "fail", "answer": wrong}})
                  for wrong in exercise.wrong]
        probes.append(code_cell(f"{exercise.answer_source}\n{exercise.check_source}",
                                **{PROBE: {"exercise": exercise.number, "expect": "pass", "answer": "solution"}}))
        by_check[check_id] = probes
    for lab in instructor.labs():
        check_id = _grade_id(instructor.cells[lab.check_index])
        by_check[check_id] = [code_cell(f"{lab.source}\n{lab.check_source}",
                                        **{PROBE: {"lab": lab.module, "expect": "pass", "answer": "solution"}})]
    out = copy.deepcopy(student)
    cells = []
    for cell in out["cells"]:
        cells.append(cell)
        cells.extend(by_check.get(_grade_id(cell), []))
    out["cells"] = cells
    return out


def execute(notebook: dict[str, Any], cwd: Path, timeout: int = 300) -> Any:
    nb = nbformat.reads(json.dumps(notebook), as_version=4)
    client = NotebookClient(nb, timeout=timeout, kernel_name="python3", allow_errors=True,
                            resources={"metadata": {"path": str(cwd)}})
    client.execute()
    return nb


def error_of(cell: Any) -> tuple[str, str] | None:
    for output in cell.get("outputs", []):
        if output.get("output_type") == "error":
            return output.get("ename", ""), output.get("evalue", "")
    return None
