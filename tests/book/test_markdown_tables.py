"""Every Markdown table in the chapters and the book's pages has as many cells in each row as in its header.

A ``|`` inside inline code still splits a table cell (GitHub-flavoured tables, which the book's Markdown
reader follows): `` `a | b` `` in a row makes one cell too many, and the row is cut or the table breaks.
Write ``\\|`` instead, or reword. The cells are counted the way the table reader counts them (split at
every ``|`` not escaped by a backslash); markdown-it-py, the book's reader, finds the tables.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

REPO_ROOT = Path(__file__).resolve().parents[2]
_UNESCAPED_BAR = re.compile(r"(?<!\\)\|")
#: CommonMark with tables, as the book reads them
PARSER = MarkdownIt("commonmark").enable("table")


def row_cells(line: str) -> list[str]:
    """The cells of one table row: split at each unescaped ``|``, the outer pipes dropped."""
    text = line.strip()
    if text.startswith("|"):
        text = text[1:]
    if text.endswith("|") and not text.endswith("\\|"):
        text = text[:-1]
    return [c.strip() for c in _UNESCAPED_BAR.split(text)]


def table_problems(markdown: str) -> list[str]:
    """Each row whose cell count differs from its table's header, and each ``|`` line outside any table."""
    lines = markdown.split("\n")
    tokens = PARSER.parse(markdown)
    problems = []
    covered: set[int] = set()
    for token in tokens:
        if token.map is None or token.type not in ("table_open", "fence", "code_block", "html_block"):
            continue
        start, end = token.map
        covered.update(range(start, end))
        if token.type != "table_open":
            continue
        width = len(row_cells(lines[start]))
        for k in range(start + 2, end):
            if lines[k].strip() and len(row_cells(lines[k])) != width:
                problems.append(f"line {k + 1}: {len(row_cells(lines[k]))} cells, header {width}: {lines[k].strip()}")
    for k, line in enumerate(lines):
        if k not in covered and line.strip().startswith("|") and line.strip().count("|") >= 2:
            problems.append(f"line {k + 1}: a table row outside any table: {line.strip()}")
    return problems


def test_a_bar_in_inline_code_is_a_cell_too_many():
    good = "| a | b |\n|---|---|\n| `x \\| y` | z |\n"
    assert table_problems(good) == []
    bad = "| a | b |\n|---|---|\n| `x | y` | z |\n"
    assert table_problems(bad) == ["line 3: 3 cells, header 2: | `x | y` | z |"]
    broken_header = "| a | `b | c` |\n|---|---|\n| 1 | 2 |\n"
    assert len(table_problems(broken_header)) == 3  # no table at all: every row is reported
    fenced = "```\n| a | b |\n| c |\n```\n"
    assert table_problems(fenced) == []


def _markdown_sources() -> list[tuple[str, str]]:
    """(name, Markdown) of every notebook's Markdown cells and every Markdown page of the book."""
    sources = []
    for path in sorted((REPO_ROOT / "notebooks").glob("*.ipynb")):
        for i, cell in enumerate(json.loads(path.read_text())["cells"]):
            if cell["cell_type"] == "markdown":
                source = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
                sources.append((f"{path.name} cell {i}", source))
    for path in sorted([*(REPO_ROOT / "notebooks").glob("*.md"), *(REPO_ROOT / "book").glob("*.md")]):
        sources.append((str(path.relative_to(REPO_ROOT)), path.read_text()))
    return sources


def test_the_book_has_tables_to_check():
    tables = [n for n, text in _markdown_sources() if "table_open" in {t.type for t in PARSER.parse(text)}]
    assert len(tables) >= 18, tables


@pytest.mark.parametrize(
    "name, markdown", _markdown_sources(), ids=lambda v: v if len(v) < 80 and "\n" not in v else None
)
def test_every_table_row_has_as_many_cells_as_its_header(name, markdown):
    assert table_problems(markdown) == [], name
