"""Pull the ``.. code-block:: llvm`` examples out of the seed ``.rst`` files.

Two layouts occur in the seeds:

* Well-formed reStructuredText (seeds 000 and 004): the directive is followed
  by a blank line and an indented body that ends at the first non-blank line
  indented no deeper than the directive itself.
* Flattened text (seed 001): every line was left-justified and the blank
  lines were dropped, so the body cannot be found by indentation.  There the
  body is taken to be the run of lines that *look like* LLVM IR, tracking the
  brace depth so that anything inside a function body is kept and, at the top
  level, only lines that can start a module-level entity are accepted.

Each layout is chosen per block: a block is "indented" when the first
non-blank line after the directive is indented deeper than the directive.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

__all__ = ["SEED_TEXT", "SeedBlock", "extract_llvm_blocks", "read_stored_block", "stored_blocks"]

#: the seeds' llvm blocks kept in the repository, one file each (``seedNNN_LINE.ll``), so that the
#: tests that use them run on any clone; each starts with three header lines naming the seed file,
#: the line of its ``.. code-block:: llvm`` directive and the section, then the block verbatim
SEED_TEXT = Path(__file__).resolve().parent / "seed_text"
_HEADER = re.compile(r"; seed: (?P<file>\S+)\n; line: (?P<line>\d+)\n; section: (?P<section>[^\n]+)\n")

_DIRECTIVE = re.compile(r"^(?P<indent>[ \t]*)\.\.[ \t]+code-block::[ \t]*(?P<lang>\S+)[ \t]*$")
_OPTION = re.compile(r"^[ \t]*:[A-Za-z-]+:")

# Lines that can start a module-level entity (or be a comment) in LLVM IR.
_TOP_LEVEL = re.compile(
    r"""^(
        define\b | declare\b | attributes\b | target\b | source_filename\b
      | [@%][-\w.$"]+\s*=          # global variable, alias, named type
      | ![-\w.]*\s*=               # metadata
      | ;                          # comment
      | \}                         # closes a body
      | module\s+asm\b
    )""",
    re.VERBOSE,
)
# A function header that continues on the next line: only the continuation
# of an open `define` may look like this (`gc "name" {`, `personality ...`).
_HEADER_CONTINUATION = re.compile(
    r"""^(gc\s+"[^"]*" | personality\b | section\b | align\b | prefix\b | prologue\b | \#\d+)""",
    re.VERBOSE,
)


@dataclass(frozen=True)
class SeedBlock:
    """One LLVM code block of a seed: file name, 1-based directive line, body text."""

    file: str
    line: int
    text: str


def _indent_width(line: str) -> int:
    """Column of the first non-blank character (tabs count as 8)."""
    expanded = line.expandtabs(8)
    return len(expanded) - len(expanded.lstrip(" "))


def _indented_body(lines: list[str], start: int, directive_indent: int) -> list[str]:
    """Body of a well-formed directive beginning at index ``start``."""
    body: list[str] = []
    i = start
    while i < len(lines):
        line = lines[i]
        if line.strip() and _indent_width(line) <= directive_indent:
            break
        body.append(line.expandtabs(8))
        i += 1
    while body and not body[-1].strip():
        body.pop()
    while body and not body[0].strip():
        body.pop(0)
    margin = min((_indent_width(b) for b in body if b.strip()), default=0)
    return [b[margin:] if b.strip() else "" for b in body]


def _brace_delta(line: str) -> int:
    """Net ``{`` minus ``}`` outside string literals and comments."""
    depth = 0
    in_string = False
    for ch in line:
        if in_string:
            if ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch == ";":
            break
        elif ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
    return depth


def _flattened_body(lines: list[str], start: int) -> list[str]:
    """Body of a block whose indentation was lost: consume IR-looking lines."""
    body: list[str] = []
    depth = 0
    open_header = False  # a `define` line seen, its `{` not yet
    i = start
    while i < len(lines):
        stripped = lines[i].strip()
        if not stripped:
            if depth == 0 and not open_header and body:
                break
            i += 1
            continue
        if _DIRECTIVE.match(lines[i]):
            break
        if depth > 0:
            accept = True
        elif open_header:
            accept = stripped.endswith("{") or bool(_HEADER_CONTINUATION.match(stripped))
        else:
            accept = bool(_TOP_LEVEL.match(stripped))
        if not accept:
            break
        body.append(stripped)
        delta = _brace_delta(stripped)
        if depth == 0 and stripped.startswith("define") and delta <= 0:
            open_header = True
        if delta > 0:
            open_header = False
        depth += delta
        if depth < 0:
            break
        i += 1
    return body


def extract_llvm_blocks(rst_path: str | Path) -> list[SeedBlock]:
    """Return every ``.. code-block:: llvm`` block of ``rst_path`` in file order."""
    path = Path(rst_path)
    lines = path.read_text(encoding="utf-8").splitlines()
    blocks: list[SeedBlock] = []
    for index, line in enumerate(lines):
        match = _DIRECTIVE.match(line)
        if not match or match.group("lang") != "llvm":
            continue
        directive_indent = _indent_width(match.group("indent"))
        start = index + 1
        while start < len(lines) and _OPTION.match(lines[start]):
            start += 1
        first = start
        while first < len(lines) and not lines[first].strip():
            first += 1
        if first < len(lines) and _indent_width(lines[first]) > directive_indent:
            body = _indented_body(lines, start, directive_indent)
        else:
            body = _flattened_body(lines, first)
        blocks.append(SeedBlock(file=path.name, line=index + 1, text="\n".join(body) + "\n"))
    return blocks


def read_stored_block(path: str | Path) -> tuple[SeedBlock, str]:
    """One stored block (``tests/seed_text/seedNNN_LINE.ll``) and the seed section it comes from."""
    text = Path(path).read_text(encoding="utf-8")
    header = _HEADER.match(text)
    if header is None:
        raise ValueError(f"{path}: the three header lines (seed, line, section) are missing")
    block = SeedBlock(file=header.group("file"), line=int(header.group("line")), text=text[header.end():])
    return block, header.group("section")


def stored_blocks() -> dict[tuple[str, int], SeedBlock]:
    """Every stored seed block, by (seed number such as "000", directive line)."""
    blocks = {}
    for path in sorted(SEED_TEXT.glob("seed*_*.ll")):
        block, _ = read_stored_block(path)
        blocks[block.file[:3], block.line] = block
    return blocks
