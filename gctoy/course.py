"""The book as a course: the chapter frame, the exercises and labs as nbgrader marks them, the student release.

The notebooks in ``notebooks/`` are the *instructor's* version: every exercise and lab carries
its solution between nbgrader's markers, and nbval runs them with the solutions in.  The
student release is made from them by ``nbgrader generate_assignment`` (``./run.sh student``, or
``python -m gctoy.course release [OUT]``) into a git-ignored folder; it is never committed.

How a chapter marks its parts (cell metadata, as nbgrader 0.9 reads it)::

    answer cell   nbgrader: {solution: true,  grade: false, locked: false, grade_id: "ex1"}
                  gctoy:    {exercise: 1, wrong: ["answer_1 = False", ...]}
                  source:   answer_1 = None   # what kind of answer
                            ### BEGIN SOLUTION
                            answer_1 = True
                            ### END SOLUTION
    check cell    nbgrader: {solution: false, grade: true, locked: true, points: 1, grade_id: "ex1-check"}
                  source:   a call into gctoy.exercises that explains a wrong answer without showing the
                            right one (see gctoy.exercises); an exact comparison that would show it sits
                            between ### BEGIN HIDDEN TESTS and ### END HIDDEN TESTS
    lab cell      nbgrader: {solution: true,  grade: false, locked: false, grade_id: "lab"}
                  gctoy:    {lab: "gctoy.labs.cheney"}
                  source:   def forward(...):  with its body between the markers
    lab check     nbgrader: {solution: false, grade: true, locked: true, points: 5, grade_id: "lab-check"}

``wrong`` lists plausible wrong answers: ``tests/book`` runs each one through the check cell
(hidden tests included, as ``nbgrader autograde`` runs it) and expects it to fail, and runs the
released (blank) notebook, hidden tests removed, and expects every check to fail.

The frame every chapter has, in this order (``FRAME``)::

    # NN · Title            one paragraph, the estimated time, previous/next links
    ## Learning goals
    ## Prerequisites
    ## 1. ... ## n. ...     the chapter's own sections
    ## Exercises
    ## Lab: ...             in chapters that have one
    ## Lessons learned
    ## Background reading
    ## Synopsis
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "FRAME",
    "Chapter",
    "Exercise",
    "Lab",
    "chapters",
    "load_chapter",
    "release",
    "BEGIN",
    "END",
    "HIDDEN_BEGIN",
    "HIDDEN_END",
]

BEGIN = "### BEGIN SOLUTION"
END = "### END SOLUTION"
#: around the exact comparison of a check cell: nbgrader removes it from the release, autograde puts it back
HIDDEN_BEGIN = "### BEGIN HIDDEN TESTS"
HIDDEN_END = "### END HIDDEN TESTS"
ASSIGNMENT = "gctoy-book"

#: the level-2 headings every chapter has, in order; ``Lab:`` is optional and sits after Exercises
FRAME = ("Learning goals", "Prerequisites", "Exercises", "Lessons learned", "Background reading", "Synopsis")
LAB_PREFIX = "Lab: "

_TITLE = re.compile(r"^# (\d\d[a-z]?) · (.+)$")


def _source(cell: dict[str, Any]) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else source


@dataclass
class Exercise:
    number: int
    answer_index: int
    check_index: int
    answer_source: str
    check_source: str
    wrong: list[str]

    @property
    def solution(self) -> str:
        """The answer cell as the instructor wrote it (solution in, markers kept)."""
        return self.answer_source


@dataclass
class Lab:
    module: str
    cell_index: int
    check_index: int
    source: str
    check_source: str


@dataclass
class Chapter:
    path: Path
    number: str
    title: str
    cells: list[dict[str, Any]]
    headings: list[str] = field(default_factory=list)

    @property
    def notebook(self) -> dict[str, Any]:
        return json.loads(self.path.read_text(encoding="utf-8"))

    def markdown(self) -> str:
        return "\n\n".join(_source(c) for c in self.cells if c["cell_type"] == "markdown")

    def _check_after(self, index: int) -> int:
        """The index of the check cell of the answer or lab cell at ``index`` (grade id '<id>-check'), or -1."""
        grade_id = self.cells[index].get("metadata", {}).get("nbgrader", {}).get("grade_id")
        return next(
            (
                i
                for i in range(index + 1, len(self.cells))
                if self.cells[i].get("metadata", {}).get("nbgrader", {}).get("grade_id") == f"{grade_id}-check"
            ),
            -1,
        )

    def _marked(self, key: str) -> list[tuple[int, Any, int, str]]:
        """(cell index, the cell's gctoy.KEY, check index, check source) of every cell marked with ``key``."""
        found = []
        for index, cell in enumerate(self.cells):
            value = cell.get("metadata", {}).get("gctoy", {}).get(key)
            if value is not None:
                check = self._check_after(index)
                found.append((index, value, check, _source(self.cells[check]) if check >= 0 else ""))
        return found

    def exercises(self) -> list[Exercise]:
        return [
            Exercise(
                number=int(number),
                answer_index=index,
                check_index=check,
                answer_source=_source(self.cells[index]),
                check_source=check_source,
                wrong=list(self.cells[index]["metadata"]["gctoy"].get("wrong", [])),
            )
            for index, number, check, check_source in self._marked("exercise")
        ]

    def labs(self) -> list[Lab]:
        return [
            Lab(
                module=module,
                cell_index=index,
                check_index=check,
                source=_source(self.cells[index]),
                check_source=check_source,
            )
            for index, module, check, check_source in self._marked("lab")
        ]


def load_chapter(path: Path) -> Chapter:
    notebook = json.loads(Path(path).read_text(encoding="utf-8"))
    cells = notebook["cells"]
    first = _source(cells[0]).splitlines()[0] if cells else ""
    match = _TITLE.match(first)
    number, title = (match.group(1), match.group(2)) if match else ("", first)
    headings = [
        line[3:].strip()
        for c in cells
        if c["cell_type"] == "markdown"
        for line in _source(c).splitlines()
        if line.startswith("## ")
    ]
    return Chapter(path=Path(path), number=number, title=title, cells=cells, headings=headings)


def chapters(notebooks: Path) -> list[Chapter]:
    return [load_chapter(p) for p in sorted(Path(notebooks).glob("[0-9][0-9]*.ipynb"))]


def strip_solutions(source: str, stub: str = "# YOUR CODE HERE\nraise NotImplementedError()") -> str:
    """The source as nbgrader releases it: each marked region replaced by ``stub``, indented like its marker."""
    out: list[str] = []
    inside = False
    for line in source.split("\n"):
        if BEGIN in line:
            indent = line[: len(line) - len(line.lstrip())]
            out.extend(indent + s for s in stub.split("\n"))
            inside = True
        elif END in line:
            inside = False
        elif not inside:
            out.append(line)
    return "\n".join(out)


def solution_regions(source: str) -> list[str]:
    """The text between each pair of markers."""
    regions: list[str] = []
    current: list[str] | None = None
    for line in source.split("\n"):
        if BEGIN in line:
            current = []
        elif END in line and current is not None:
            regions.append("\n".join(current))
            current = None
        elif current is not None:
            current.append(line)
    return regions


_CONFIG = """\
c = get_config()
c.CourseDirectory.course_id = "gctoy"
c.CourseDirectory.db_url = "sqlite:///{db}"
"""


def release(notebooks: Path, out: Path) -> list[Path]:
    """Make the student version of every chapter with ``nbgrader generate_assignment`` into ``out``."""
    notebooks = Path(notebooks).resolve()
    out = Path(out).resolve()
    with tempfile.TemporaryDirectory(prefix="gctoy-course-") as tmp:
        root = Path(tmp)
        source = root / "source" / ASSIGNMENT
        source.mkdir(parents=True)
        for path in sorted(notebooks.glob("[0-9][0-9]*.ipynb")):
            shutil.copy2(path, source / path.name)
        (root / "nbgrader_config.py").write_text(_CONFIG.format(db=root / "gradebook.db"), encoding="utf-8")
        env = dict(os.environ)
        # nbgrader runs its database migrations with the `alembic` script installed beside Python
        env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
        command = [
            sys.executable,
            "-m",
            "nbgrader",
            "generate_assignment",
            ASSIGNMENT,
            "--force",
            "--CourseDirectory.root=" + str(root),
            "--log-level=WARN",
        ]
        done = subprocess.run(command, cwd=root, env=env, capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(
                f"nbgrader generate_assignment failed (status {done.returncode}):\n"
                f"{done.stdout[-3000:]}{done.stderr[-3000:]}"
            )
        made = root / "release" / ASSIGNMENT
        if out.exists():
            shutil.rmtree(out)
        shutil.copytree(made, out)
    return sorted(out.glob("*.ipynb"))


WRONG_ANSWERS_START = "<!-- wrong answers: made by `python -m gctoy.course wrong-answers`; do not edit by hand -->"
WRONG_ANSWERS_END = "<!-- end of wrong answers -->"


def _question(chapter: Chapter, exercise: Exercise) -> str:
    """The first sentence of the exercise's question (the markdown cell before its answer cell)."""
    for index in range(exercise.answer_index - 1, -1, -1):
        cell = chapter.cells[index]
        if cell["cell_type"] == "markdown" and f"**Exercise {exercise.number}.**" in _source(cell):
            text = _source(cell).split(f"**Exercise {exercise.number}.**", 1)[1].strip()
            first = re.split(r"(?<=[.?!])\s", text.replace("\n", " "), maxsplit=1)[0]
            return first if len(first) <= 160 else first[:157] + "..."
    return ""


def wrong_answers_markdown(notebooks: Path) -> str:
    """The instructor page's table of the wrong answers every exercise's check recognises."""
    rows = ["| chapter | exercise | question | plausible wrong answers |", "|---|---|---|---|"]
    for chapter in chapters(notebooks):
        for exercise in chapter.exercises():
            # a table row is one line: an answer of several statements is written on one, joined by "; "
            one_line = ("; ".join(s.strip() for s in w.strip().splitlines() if s.strip()) for w in exercise.wrong)
            wrong = "; ".join(f"`{w}`" for w in one_line).replace("|", "\\|")
            question = _question(chapter, exercise).replace("|", "\\|")
            rows.append(f"| [{chapter.number}]({chapter.path.name}) | {exercise.number} | {question} | {wrong} |")
    return "\n".join([WRONG_ANSWERS_START, *rows, WRONG_ANSWERS_END])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m gctoy.course", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    rel = sub.add_parser("release", help="make the student notebooks (solutions removed) with nbgrader")
    rel.add_argument("out", nargs="?", default="student", help="output folder (default: student/)")
    rel.add_argument("--notebooks", default="notebooks", help="the instructor notebooks (default: notebooks/)")
    wrong = sub.add_parser("wrong-answers", help="print the instructor page's table of wrong answers")
    wrong.add_argument("--notebooks", default="notebooks")
    args = parser.parse_args(argv)
    if args.command == "wrong-answers":
        print(wrong_answers_markdown(Path(args.notebooks)))
        return 0
    try:
        made = release(Path(args.notebooks), Path(args.out))
    except (RuntimeError, OSError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    print(f"{len(made)} student notebooks in {args.out}/ (solutions removed; open them with ./run.sh book)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
