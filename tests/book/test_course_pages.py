"""The course kit: the seed headings are facts checked against the seeds, the coverage table gives
every one of them a chapter section that exists, the syllabus assigns every chapter and lab, and
every glossary link in the book lands on a term."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from course_notebooks import LAB_CHAPTERS, NOTEBOOKS, ROOT, book

HEADINGS = json.loads((ROOT / "tests" / "seed_text" / "seed_headings.json").read_text(encoding="utf-8"))
CHAPTERS = {c.number: c for c in book()}
ADORNMENT = re.compile(r"^([=\-~^\"*+#`])\1{2,}\s*$")


def rst_headings(path: Path) -> list[tuple[int, str]]:
    """(line, text) of every section title of a reStructuredText file: a line underlined by a run of
    one punctuation character at least as long as the title."""
    lines = path.read_text(encoding="utf-8").splitlines()
    found = []
    for i in range(len(lines) - 1):
        text, under = lines[i].strip(), lines[i + 1]
        if text and ADORNMENT.match(under) and len(under.strip()) >= len(text) and not ADORNMENT.match(lines[i]):
            found.append((i + 1, text.replace("\xa0", " ")))
    return found


def test_seed_headings_are_the_seeds(seeds_dir):
    for seed in ("000", "001", "003", "004"):
        path = next(seeds_dir.glob(f"{seed}-*.rst"))
        ours = [(h["line"], h["heading"]) for h in HEADINGS["headings"] if h["seed"] == seed]
        theirs = [(line, text) for line, text in rst_headings(path) if text != "ReStructuredText"]
        assert ours == theirs, f"seed {seed}: the stored headings differ from the seed's"
    text = next(seeds_dir.glob("002-*.md")).read_text(encoding="utf-8").splitlines()
    for topic in HEADINGS["topics_002"]:
        assert topic["phrase"] in text[topic["line"] - 1], topic


def coverage_rows() -> list[tuple[str, int, str, str]]:
    rows = []
    for line in (NOTEBOOKS / "course_coverage.md").read_text(encoding="utf-8").splitlines():
        match = re.match(r"^\| (\d{3}) \| (\d+) \| (.+?) \| (.+) \|$", line)
        if match:
            rows.append((match.group(1), int(match.group(2)), match.group(3), match.group(4)))
    return rows


def test_every_seed_heading_has_a_row():
    rows = {(seed, line) for seed, line, _, _ in coverage_rows()}
    wanted = {(h["seed"], h["line"]) for h in HEADINGS["headings"]} | {("002", t["line"]) for t in HEADINGS["topics_002"]}
    assert not wanted - rows, f"seed headings with no row in course_coverage.md: {sorted(wanted - rows)}"
    assert len(wanted) >= 130


@pytest.mark.parametrize("row", coverage_rows(), ids=lambda r: f"{r[0]}:{r[1]}")
def test_every_row_names_sections_that_exist(row):
    seed, line, heading, taught = row
    refs = [part.strip() for part in taught.split(";")]
    assert refs and all(refs)
    for ref in refs:
        match = re.match(r"^\[(\d\d)\]\((\d\d_[^)]+\.ipynb)\) › (.+)$", ref)
        assert match, f"{seed}:{line} {heading}: '{ref}' should be '[NN](NN_File.ipynb) › section'"
        number, file, section = match.groups()
        chapter = CHAPTERS[number]
        assert chapter.path.name == file, f"{ref}: chapter {number} is {chapter.path.name}"
        assert any(h == section or h.startswith(section) for h in chapter.headings), (
            f"seed {seed} line {line} ({heading}): chapter {number} has no section '{section}'; it has {chapter.headings}")


def test_syllabus_assigns_every_chapter_and_lab():
    text = (NOTEBOOKS / "course_syllabus.md").read_text(encoding="utf-8")
    for chapter in CHAPTERS.values():
        assert f"({chapter.path.name})" in text, f"the syllabus does not assign {chapter.path.name}"
    for number in LAB_CHAPTERS:
        assert re.search(rf"\[{number}\]\({number}_[^)]+\): ", text), f"the syllabus has no lab of chapter {number}"
    assert [int(w) for w in re.findall(r"^## Week (\d)", text, re.M)] == [1, 2, 3, 4]


def slug(title: str) -> str:
    """MyST's heading anchor (GitHub style), as myst_heading_anchors makes it."""
    return re.sub(r"[^\w\u4e00-\u9fff\- ]", "", title.lower().replace(" ", "-"))


GLOSSARY_TERMS = {slug(line[4:].strip()) for line in (NOTEBOOKS / "glossary.md").read_text(encoding="utf-8").splitlines()
                  if line.startswith("### ")}


def test_glossary_has_the_terms_the_course_needs():
    wanted = {"token", "immarg", "deoptimization", "non-integral-address-space", "mem2reg", "scev", "cfi",
              "dwarf-register-numbers", "regdisplay", "hijacking", "p-invoke", "card-table", "brick-table",
              "bakers-invariant"}
    assert wanted <= GLOSSARY_TERMS, sorted(wanted - GLOSSARY_TERMS)


def _links(text: str) -> list[str]:
    return re.findall(r"\]\((?:\./)?glossary\.md#([^)\s]+)\)", text)


def test_every_glossary_link_lands_on_a_term():
    missing = []
    count = 0
    for path in sorted(NOTEBOOKS.glob("*.ipynb")) + sorted(NOTEBOOKS.glob("*.md")):
        if path.suffix == ".ipynb":
            text = "\n".join("".join(c["source"]) for c in json.loads(path.read_text())["cells"] if c["cell_type"] == "markdown")
        else:
            text = path.read_text(encoding="utf-8")
        for anchor in _links(text):
            count += 1
            if anchor not in GLOSSARY_TERMS:
                missing.append(f"{path.name}: glossary.md#{anchor}")
    assert not missing, "links to terms the glossary does not have:\n" + "\n".join(missing)
    assert count >= 18, f"only {count} glossary links in the book"


def test_glossary_internal_links_land():
    text = (NOTEBOOKS / "glossary.md").read_text(encoding="utf-8")
    inner = re.findall(r"\]\(#([^)]+)\)", text)
    assert inner and not [a for a in inner if a not in GLOSSARY_TERMS]
    chapters = set(re.findall(r"\]\((\d\d_[^)]+\.ipynb)\)", text))
    assert chapters <= {c.path.name for c in CHAPTERS.values()}


def test_instructor_page_lists_every_exercise_and_its_wrong_answers():
    from gctoy.course import wrong_answers_markdown

    table = wrong_answers_markdown(NOTEBOOKS)
    page = (NOTEBOOKS / "course_instructor.md").read_text(encoding="utf-8")
    assert table in page, "the wrong-answer table is stale: python -m gctoy.course wrong-answers"
    assert table.count("\n| [") >= 3 * 18
