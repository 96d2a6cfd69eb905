"""The student release: nbgrader takes the solutions out, the checks fail on the released
notebooks (blank answers) and on each plausible wrong answer, and pass with the instructor's
answers put back."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from course_notebooks import NOTEBOOKS, ROOT, book, code_cell, markdown_cell, notebook
from gctoy.course import BEGIN, END, HIDDEN_BEGIN, HIDDEN_END, load_chapter, release, solution_regions, strip_solutions
from gctoy.exercises import answers_in_sight
from student_run import PROBE, error_of, execute, probed_notebook

CHAPTERS = book()
IDS = [c.path.stem[:2] for c in CHAPTERS]
EXPLAINING = {"WrongAnswer", "LabFailure"}


@pytest.fixture(scope="session")
def released(tmp_path_factory):
    out = tmp_path_factory.mktemp("student") / "student"
    release(NOTEBOOKS, out)
    return out


def _solution_lines(chapter):
    """Lines of the solutions that appear nowhere else in the instructor's notebook (so their presence leaks)."""
    outside = "\n".join(strip_solutions("".join(c["source"])) for c in chapter.cells)
    lines = set()
    for cell in chapter.cells:
        for region in solution_regions("".join(cell["source"])):
            for line in region.splitlines():
                line = line.strip()
                if len(line) >= 8 and not line.startswith("#") and line not in outside:
                    lines.add(line)
    return lines


def test_release_of_a_small_course(tmp_path):
    """gctoy.course.release on a one-exercise notebook: nbgrader accepts gctoy's cell metadata."""
    source = tmp_path / "notebooks"
    source.mkdir()
    cells = [
        markdown_cell("# 00 · Tiny"),
        code_cell(f"answer_1 = None\n{BEGIN}\nanswer_1 = 42\n{END}",
                  nbgrader={"solution": True, "grade": False, "locked": False, "grade_id": "ex1", "schema_version": 3},
                  gctoy={"exercise": 1, "wrong": ["answer_1 = 41"]}),
        code_cell("from gctoy.exercises import check_answered, check_equal\n"
                  f"check_answered('answer_1', answer_1, int)\n{HIDDEN_BEGIN}\n"
                  f"check_equal('answer_1', answer_1, 6 * 7, why='6 times 7')\n{HIDDEN_END}",
                  nbgrader={"solution": False, "grade": True, "locked": True, "points": 1, "grade_id": "ex1-check",
                            "schema_version": 3}),
    ]
    (source / "00_Tiny.ipynb").write_text(json.dumps(notebook(cells)), encoding="utf-8")
    made = release(source, tmp_path / "student")
    assert [p.name for p in made] == ["00_Tiny.ipynb"]
    cell = json.loads(made[0].read_text())["cells"][1]
    assert "answer_1 = 42" not in "".join(cell["source"]) and "raise NotImplementedError()" in "".join(cell["source"])
    check = "".join(json.loads(made[0].read_text())["cells"][2]["source"])
    assert "check_answered" in check and "6 * 7" not in check and HIDDEN_BEGIN not in check   # hidden test removed
    run = execute(probed_notebook(json.loads(made[0].read_text()), load_chapter(source / "00_Tiny.ipynb")), tmp_path)
    assert error_of(run.cells[2])[0] == "WrongAnswer"   # the blank answer
    assert error_of(run.cells[3])[0] == "WrongAnswer"   # the wrong answer 41, caught by the hidden test put back
    assert error_of(run.cells[4]) is None               # the solution


def test_student_command_writes_the_release(tmp_path):
    done = subprocess.run([sys.executable, "-m", "gctoy.course", "release", str(tmp_path / "out")], cwd=ROOT,
                          capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr
    assert len(list((tmp_path / "out").glob("*.ipynb"))) == len(CHAPTERS)


@pytest.mark.parametrize("chapter", CHAPTERS, ids=IDS)
def test_no_solution_survives_the_release(chapter, released):
    text = (released / chapter.path.name).read_text(encoding="utf-8")
    student = json.loads(text)
    sources = "\n".join("".join(c["source"]) for c in student["cells"])
    assert BEGIN not in sources and END not in sources
    leaked = sorted(line for line in _solution_lines(chapter) if line in sources)
    assert not leaked, f"{chapter.path.name}: solution lines in the student release: {leaked[:5]}"
    assert all(not c.get("outputs") for c in student["cells"] if c["cell_type"] == "code"), "outputs left in"


@pytest.mark.parametrize("chapter", CHAPTERS, ids=IDS)
def test_no_check_shows_or_computes_its_answer_in_the_release(chapter, released):
    """A released check cell says why an answer is wrong without the right answer or a computation of it."""
    student = json.loads((released / chapter.path.name).read_text(encoding="utf-8"))
    problems = []
    for cell in student["cells"]:
        grade = cell.get("metadata", {}).get("nbgrader", {})
        if grade.get("grade"):
            source = "".join(cell["source"])
            assert HIDDEN_BEGIN not in source and HIDDEN_END not in source, f"{grade['grade_id']}: hidden test released"
            problems.extend(f"{grade['grade_id']} {problem}" for problem in answers_in_sight(source))
    assert not problems, f"{chapter.path.name}:\n" + "\n".join(problems)


@pytest.mark.slow
@pytest.mark.parametrize("chapter", CHAPTERS, ids=IDS)
def test_checks_fail_on_blank_and_wrong_answers_and_pass_on_solutions(chapter, released):
    student = json.loads((released / chapter.path.name).read_text(encoding="utf-8"))
    run = execute(probed_notebook(student, chapter), NOTEBOOKS)
    problems = []
    for cell in run.cells:
        meta = cell.get("metadata", {})
        error = error_of(cell)
        grade = meta.get("nbgrader", {})
        if grade.get("grade"):
            if error is None or error[0] not in EXPLAINING:
                problems.append(f"check {grade['grade_id']} on the blank answer: {error or 'passed'}")
        probe = meta.get(PROBE)
        if probe:
            if probe["expect"] == "fail" and (error is None or error[0] not in EXPLAINING):
                problems.append(f"exercise {probe['exercise']} with wrong answer {probe['answer']!r}: {error or 'passed'}")
            if probe["expect"] == "pass" and error is not None:
                problems.append(f"{probe.get('lab') or 'exercise %s' % probe['exercise']} with the solution: {error}")
        elif error is not None and not grade and not _is_answer_cell(cell):
            problems.append(f"cell {''.join(cell['source'])[:60]!r} failed: {error}")
    assert not problems, f"{chapter.path.name}:\n" + "\n".join(problems)


def _is_answer_cell(cell):
    return cell.get("metadata", {}).get("nbgrader", {}).get("solution") is True
