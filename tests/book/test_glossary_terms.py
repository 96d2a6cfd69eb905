"""A chapter never uses a glossary term before the book has taught it without saying where it is taught.

For every term of notebooks/glossary.md and every chapter, the first mention of the term in the chapter's
markdown (prose only: code, the seeds' quoted words and text in quotation marks are not counted) must be

* in a chapter that teaches the term. Which chapters teach a term is what its glossary entry says: the
  chapters it links to ("Chapter [12](12_...ipynb)");
* or a link: to the term's glossary entry (or to an entry that explains it in its own words, as
  "addrspace 1" does "address space"), or to a chapter that teaches it;
* or a reference flagged as such: its sentence (or list item, or table row) names a chapter that teaches
  the term ("we meet it properly in chapter 12", "(chapters 10 and 11)", a link to the chapter, a table
  cell "07–09" in a column of chapters), or links to the glossary page itself.

Not counted as mentions: headings, the text of a link to a chapter or to an outside document (a title), and the seeds'
section headings in italics (*Computing stack maps*: a citation).
"""

from __future__ import annotations

import json
import re

from course_notebooks import ROOT

import pytest

from course_notebooks import NOTEBOOKS

ITEM = re.compile(r"^[ ]{0,3}(?:[-*]|\d+\.) ", re.M)
CHAPTERS = sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))
LINK = re.compile(r"\[([^\]]*)\]\(([^)\s]*)\)")


def slug(title: str) -> str:
    """MyST's heading anchor (GitHub style), as myst_heading_anchors makes it."""
    return re.sub(r"[^\w\u4e00-\u9fff\- ]", "", title.lower().replace(" ", "-"))


def glossary() -> dict[str, tuple[set[str], str]]:
    """{term: (the chapters its entry names as teaching it, the entry's text)}."""
    text = (NOTEBOOKS / "glossary.md").read_text(encoding="utf-8")
    entries = {}
    for block in re.split(r"^### ", text, flags=re.M)[1:]:
        title, _, body = block.partition("\n")
        entries[title.strip()] = (set(re.findall(r"\]\((\d\d)_[^)\s]+\.ipynb\)", body)), body)
    return entries


ENTRIES = glossary()
BY_SLUG = {slug(term): term for term in ENTRIES}


def _blank(match: re.Match) -> str:
    return " " * len(match.group())


def markdown(path) -> str:
    """A chapter's markdown cells, one after the other."""
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return "\n\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")


SEED_HEADINGS = {
    h["heading"].lower() for h in json.loads((ROOT / "tests" / "seed_text" / "seed_headings.json").read_text())["headings"]
}


def _title(match: re.Match) -> str:
    """A link to a chapter or to an outside document: its text is a title, blanked; a glossary link is kept."""
    if re.match(r"(?:\./)?\d\d_|https?:", match.group(2)):
        return "[" + " " * len(match.group(1)) + "](" + match.group(2) + ")"
    return match.group()


def _heading(match: re.Match) -> str:
    """``*Seed heading*`` blanked: the name of a seed's section."""
    names = [part.strip(" *").lower() for part in re.split(r",|\(|\)", match.group(1))]
    return _blank(match) if any(name in SEED_HEADINGS for name in names if name) else match.group()


def prose(text: str) -> str:
    """Markdown with code, quoted seed text, words in quotation marks, titles and seed headings blanked out
    (offsets kept)."""
    text = LINK.sub(_title, text)
    text = re.sub(r"(?<![*\w])\*([^*\n]+)\*(?![*\w])", _heading, text)
    text = re.sub(r"```.*?```", _blank, text, flags=re.S)
    text = re.sub(r"`[^`\n]*`", _blank, text)
    text = re.sub(r"^>.*$", _blank, text, flags=re.M)
    text = re.sub(r"^#+ .*$", _blank, text, flags=re.M)  # headings name what follows
    return re.sub(r"\"(?:[^\"\n]|\n(?!\n))*\"|“(?:[^”\n]|\n(?!\n))*”", _blank, text)  # in one paragraph


def mention(term: str) -> re.Pattern:
    """The term, or its plural, as a word (acronyms in capitals only)."""
    words = sorted({term, term.replace("’", "'")})
    flags = 0 if term.isupper() else re.I
    return re.compile(r"(?<![\w\-/#.])(?:%s)(?:s|es)?(?![\w\-])" % "|".join(map(re.escape, words)), flags)


def sentence(text: str, pos: int) -> str:
    """The table row, the list item, or the sentence around ``pos``."""
    line_start = text.rfind("\n", 0, pos) + 1
    if text.startswith("|", line_start):
        end = text.find("\n", pos)
        return text[line_start : len(text) if end < 0 else end]
    item = ITEM.match(text, line_start)
    if item is None:  # a continuation line: find the item it continues
        starts = [m.start() for m in ITEM.finditer(text, 0, line_start) if "\n\n" not in text[m.start() : line_start]]
        item_start = starts[-1] if starts else None
    else:
        item_start = line_start
    if item_start is not None:
        end = re.compile(r"\n(?=[ ]{0,3}(?:[-*]|\d+\.) |\n)").search(text, pos)
        return text[item_start : end.start() if end else len(text)]
    para = text.rfind("\n\n", 0, pos)
    para = 0 if para < 0 else para + 2
    ends = [m.end() for m in re.finditer(r"[.!?](?=\s)", text[para:pos])]
    start = para + (ends[-1] if ends else 0)
    after = re.search(r"[.!?](?=\s)|\n\n", text[pos:])
    return text[start : pos + (after.end() if after else len(text) - pos)]


def named_chapters(text: str) -> set[str]:
    """The chapters a sentence links to or names ("chapter 12", "chapters 10 and 11", "chapters 07–09")."""
    named = {t[:2] for t in re.findall(r"\]\((?:\./)?(\d\d_[^)\s]*)\)", text)}
    for a, b in re.findall(r"\|\s*(\d\d)(?:\s*[–-]\s*(\d\d))?\s*(?=\|)", text):  # a table's column of chapters
        named |= {f"{n:02d}" for n in range(int(a), int(b or a) + 1)}
    for match in re.finditer(r"[Cc]hapters?\s+((?:\d\d(?:,\s+|\s+and\s+|\s+or\s+|–|-))*\d\d)", text):
        numbers = re.findall(r"\d\d", match.group(1))
        named |= set(numbers)
        for a, b in re.findall(r"(\d\d)[–-](\d\d)", match.group(1)):
            named |= {f"{n:02d}" for n in range(int(a), int(b) + 1)}
    return named


def unannounced_first_mention(number: str, text: str, term: str) -> str | None:
    """The sentence of the term's first mention in a chapter, if it breaks the rule above; else None."""
    teaching, _ = ENTRIES[term]
    if number in teaching:
        return None
    masked = LINK.sub(lambda m: f"[{m.group(1)}](" + " " * len(m.group(2)) + ")", text)
    for longer in ENTRIES:  # "address space" inside "non-integral address space" is the longer term
        if longer != term and term.lower() in longer.lower():
            masked = mention(longer).sub(_blank, masked)
    found = mention(term).search(masked)
    if found is None:
        return None
    for link in LINK.finditer(text):
        if link.start(1) <= found.start() < link.end(1):
            target = link.group(2)
            anchor = target.partition("glossary.md#")[2]
            entry = ENTRIES.get(BY_SLUG.get(anchor, ""), (set(), ""))[1]
            if anchor == slug(term) or (anchor and mention(term).search(entry)):
                return None
            if re.match(r"(?:\./)?\d\d_", target) and target.removeprefix("./")[:2] in teaching:
                return None
    around = sentence(text, found.start())
    glossary_link = rf"\]\((?:\./)?glossary\.md(?:#{re.escape(slug(term))})?\)"
    if named_chapters(around) & teaching or re.search(glossary_link, around):
        return None
    return " ".join(around.split())


def chapter_findings(number: str, text: str) -> dict[tuple[str, str], str]:
    """{(chapter, term): sentence} for every first mention in one chapter's markdown that breaks the rule."""
    text = prose(text)
    found = {}
    for term in ENTRIES:
        problem = unannounced_first_mention(number, text, term)
        if problem is not None:
            found[number, term] = problem
    return found


def findings() -> dict[tuple[str, str], str]:
    """{(chapter, term): sentence} for every first mention that breaks the rule, in every chapter."""
    found = {}
    for path in CHAPTERS:
        found |= chapter_findings(path.name[:2], markdown(path))
    return found


def test_every_term_names_the_chapters_that_teach_it_or_links_to_another_term():
    lost = [term for term, (teaching, body) in ENTRIES.items() if not teaching and "](#" not in body]
    assert not lost, f"glossary entries that name no chapter and no other term: {lost}"


def test_a_chapter_says_where_a_term_is_taught_before_it_uses_it():
    found = findings()
    assert not found, "first mentions of glossary terms before the book teaches them, with no link:\n" + "\n".join(
        f"  chapter {number}, '{term}': {text[:200]}" for (number, term), text in sorted(found.items())
    )


@pytest.mark.parametrize("path", CHAPTERS[:1] + CHAPTERS[-1:], ids=lambda path: path.name[:2])
def test_an_unlinked_first_mention_planted_in_a_chapter_is_caught(path):
    number, text = path.name[:2], markdown(path)
    assert chapter_findings(number, text) == {}
    planted = "Every store here goes through a write barrier.\n\n" + text
    assert set(chapter_findings(number, planted)) == {(number, "write barrier")}
    linked = "Every store here goes through a [write barrier](glossary.md#write-barrier).\n\n" + text
    assert chapter_findings(number, linked) == {}


@pytest.mark.parametrize(
    ("text", "ok"),
    [
        ("Here a write barrier runs.", False),
        ("Here a [write barrier](glossary.md#write-barrier) runs.", True),
        ("Here a write barrier runs (chapter 12).", True),
        ("Here a write barrier runs (we meet it properly in [chapter 12](12_Barriers.ipynb)).", True),
        ("Here a [write barrier](glossary.md#read-barrier) runs.", False),
        ("Here a `write barrier` runs. Then a write barrier, as chapter 12 shows.", True),
        ('The seed says "write barriers". Then a write barrier runs.', False),
        ("| a | write barriers | (12) |", False),
        ("| a | write barriers | chapter 12 |", True),
        ("| 12 | Write barriers |", True),
        ("- **Write barriers.** A [write barrier](glossary.md#write-barrier) runs\n  at each store.", True),
        ("- **Write barriers.** A write barrier runs\n  at each store.\n- [write barrier](glossary.md#write-barrier)", False),
    ],
)
def test_the_rule_on_sentences(text, ok):
    assert (unannounced_first_mention("10", prose(text), "write barrier") is None) is ok
