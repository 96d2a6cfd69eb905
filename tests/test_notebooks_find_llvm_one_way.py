"""The chapters find LLVM's tools the way the tests and benchmarks do: through gctoy.llvm_tools."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parent.parent / "notebooks").glob("*.ipynb"))
#: spellings of a finder of a chapter's own: a PATH lookup of an LLVM tool, or a version check of one
OWN_FINDER = re.compile(r"""shutil\.which\(\s*["'](opt|llc|lli|llvm-[\w-]+)|LLVM version \d""")


def code_of(path: Path) -> str:
    """The code cells of a notebook, joined."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    return "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code")


def test_the_pattern_finds_a_finder_of_its_own():
    assert OWN_FINDER.search('OPT14 = shutil.which("opt-14")')
    assert OWN_FINDER.search('if "LLVM version 14." in out:')
    assert not OWN_FINDER.search('OPT14 = tool_path("opt", 14)')
    assert not OWN_FINDER.search('shutil.which("objdump")')


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem[:2] for p in NOTEBOOKS])
def test_chapter_finds_llvm_through_gctoy_llvm_tools(path):
    code = code_of(path)
    found = OWN_FINDER.search(code)
    assert found is None, f"{path.name} looks for LLVM itself ({found.group(0)!r}); use gctoy.llvm_tools.tool_path"


def test_there_are_chapters_to_check():
    assert len(NOTEBOOKS) >= 18
