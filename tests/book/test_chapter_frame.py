"""Every chapter has the course frame (GUIDE §6): the same headings in the same order, an estimated
time, links to its neighbours, 3-6 learning goals, at least three exercises marked for nbgrader with
a check and a wrong answer each, and a lab in the chapters that have one."""

from __future__ import annotations

import re

import pytest

from course_notebooks import LAB_CHAPTERS, book
from gctoy.course import BEGIN, END, FRAME, LAB_PREFIX

CHAPTERS = book()
IDS = [c.path.stem[:2] for c in CHAPTERS]


def test_the_book_has_its_eighteen_chapters():
    assert [c.number for c in CHAPTERS] == [f"{n:02d}" for n in range(18)]


@pytest.mark.parametrize("chapter", CHAPTERS, ids=IDS)
def test_frame_headings_in_order(chapter):
    positions = []
    for heading in FRAME:
        assert heading in chapter.headings, f"{chapter.path.name} has no '## {heading}' heading"
        positions.append(chapter.headings.index(heading))
    assert positions == sorted(positions), f"{chapter.path.name}: frame headings out of order: {chapter.headings}"
    assert chapter.headings.index("Prerequisites") == 1 and chapter.headings[0] == "Learning goals", (
        f"{chapter.path.name}: the chapter must open with Learning goals, then Prerequisites: {chapter.headings[:3]}")
    tail = chapter.headings[chapter.headings.index("Exercises"):]
    labs = [h for h in tail if h.startswith(LAB_PREFIX)]
    assert [h for h in tail if not h.startswith(LAB_PREFIX)] == ["Exercises", "Lessons learned", "Background reading",
                                                                 "Synopsis"], (
        f"{chapter.path.name}: after Exercises only a lab and the closing headings may follow: {tail}")
    if chapter.number in LAB_CHAPTERS:
        assert len(labs) >= 1, f"{chapter.path.name} should have a '## Lab: ...' section"


@pytest.mark.parametrize("chapter", CHAPTERS, ids=IDS)
def test_opening_cell_has_time_and_neighbours(chapter):
    first = "".join(chapter.cells[0]["source"])
    assert re.search(r"Estimated time: about \d+", first), f"{chapter.path.name}: no 'Estimated time: about N ...'"
    names = [c.path.name for c in CHAPTERS]
    index = names.index(chapter.path.name)
    if index > 0:
        assert f"({names[index - 1]})" in first, f"{chapter.path.name}: no link to the previous chapter"
    if index + 1 < len(names):
        assert f"({names[index + 1]})" in first, f"{chapter.path.name}: no link to the next chapter"


def _section(chapter, heading):
    text = chapter.markdown()
    match = re.search(rf"^## {re.escape(heading)}\n(.*?)(?=^## |\Z)", text, re.S | re.M)
    assert match, f"{chapter.path.name}: section {heading} not found"
    return match.group(1)


@pytest.mark.parametrize("chapter", CHAPTERS, ids=IDS)
def test_learning_goals_are_three_to_six_items(chapter):
    goals = [line for line in _section(chapter, "Learning goals").splitlines() if re.match(r"^\s*[-*\d]", line)]
    assert 3 <= len(goals) <= 6, f"{chapter.path.name}: {len(goals)} learning goals"


@pytest.mark.parametrize("chapter", CHAPTERS, ids=IDS)
def test_closing_sections_have_content(chapter):
    lessons = _section(chapter, "Lessons learned")
    reading = _section(chapter, "Background reading")
    assert len([l for l in lessons.splitlines() if l.strip().startswith(("-", "*"))]) >= 3, chapter.path.name
    assert len([l for l in reading.splitlines() if l.strip().startswith(("-", "*"))]) >= 3, chapter.path.name


@pytest.mark.parametrize("chapter", CHAPTERS, ids=IDS)
def test_exercises_are_marked_for_nbgrader(chapter):
    exercises = chapter.exercises()
    assert len(exercises) >= 3, f"{chapter.path.name}: {len(exercises)} exercises, at least 3 wanted"
    assert [e.number for e in exercises] == list(range(1, len(exercises) + 1))
    grade_ids = [c["metadata"]["nbgrader"]["grade_id"] for c in chapter.cells if "nbgrader" in c.get("metadata", {})]
    assert len(grade_ids) == len(set(grade_ids)), f"{chapter.path.name}: duplicate grade ids {grade_ids}"
    for exercise in exercises:
        where = f"{chapter.path.name} exercise {exercise.number}"
        answer = chapter.cells[exercise.answer_index]["metadata"]["nbgrader"]
        assert answer.get("solution") is True and answer.get("grade") is False, where
        assert BEGIN in exercise.answer_source and END in exercise.answer_source, f"{where}: no solution markers"
        assert exercise.check_index > exercise.answer_index, f"{where}: no check cell (grade_id '<id>-check')"
        check = chapter.cells[exercise.check_index]["metadata"]["nbgrader"]
        assert check.get("grade") is True and check.get("points", 0) > 0 and check.get("locked") is True, where
        assert exercise.wrong, f"{where}: list at least one plausible wrong answer in metadata gctoy.wrong"


@pytest.mark.parametrize("number", sorted(LAB_CHAPTERS))
def test_lab_chapters_name_their_lab_module(number):
    chapter = next(c for c in CHAPTERS if c.number == number)
    labs = chapter.labs()
    assert [lab.module for lab in labs] == [LAB_CHAPTERS[number]], f"{chapter.path.name}: labs {labs}"
    lab = labs[0]
    assert BEGIN in lab.source and END in lab.source and lab.check_index > lab.cell_index
    assert LAB_CHAPTERS[number] in lab.check_source


@pytest.mark.parametrize("chapter", CHAPTERS, ids=IDS)
def test_every_chapter_shows_a_widget_with_its_state_saved(chapter):
    view = "application/vnd.jupyter.widget-view+json"
    outputs = [o for c in chapter.cells if c["cell_type"] == "code" for o in c.get("outputs", [])]
    views = [o["data"][view]["model_id"] for o in outputs if view in o.get("data", {})]
    assert views, f"{chapter.path.name} shows no widget"
    state = chapter.notebook["metadata"].get("widgets", {}).get("application/vnd.jupyter.widget-state+json", {})
    assert set(views) <= set(state.get("state", {})), f"{chapter.path.name}: widget state not saved for every view"


@pytest.mark.parametrize("chapter", CHAPTERS, ids=IDS)
def test_solutions_are_collapsed_in_the_html_book(chapter):
    """Every answer and lab cell (nbgrader solution cells) carries myst-nb's hide-input tag: the HTML book
    built from the instructor's notebooks shows a solution only when the reader opens it."""
    solutions = [c for c in chapter.cells if c.get("metadata", {}).get("nbgrader", {}).get("solution") is True]
    assert len(solutions) >= 3
    bare = [i for i, c in enumerate(chapter.cells) if c in solutions and "hide-input" not in c["metadata"].get("tags", [])]
    assert not bare, f"{chapter.path.name}: solution cells without hide-input: {bare}"
