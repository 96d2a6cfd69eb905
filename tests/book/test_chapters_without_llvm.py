"""Every chapter runs where LLVM is not installed (Binder, conda): nbval with LLVM hidden from gctoy."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from gctoy.llvm_results import REFRESH_ENV, stored_line
from gctoy.llvm_tools import hidden_environment

from student_run import error_of, execute

ROOT = Path(__file__).resolve().parent.parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


def test_every_chapter_runs_with_llvm_hidden(tmp_path):
    env = hidden_environment()
    env.pop("GCTOY_REQUIRE_ORACLES", None)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p)
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-p", "no:xdist", "--nbval-lax",
         "--nbval-current-env", "--nbval-sanitize-with", str(ROOT / "tests" / "nbval_sanitize.cfg"),
         "--rootdir", str(ROOT), *map(str, NOTEBOOKS)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=1800,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert " passed" in done.stdout and len(NOTEBOOKS) >= 18


# --- the chapters that show LLVM's answers say, with LLVM hidden, that they show the stored ones ---------

#: the chapters that compare gctoy with LLVM 14 and keep LLVM's answers in gctoy's store (gctoy.llvm_results),
#: and any other chapter that uses the store
STORED = ("03", "07", "08", "10", "11", "12")
SHOWS_STORED = sorted(
    nb for nb in NOTEBOOKS if nb.name[:2] in STORED or "LLVMResults(" in nb.read_text(encoding="utf-8")
)
#: a cell that hands its LLVM tool runs to the chapter's LLVMResults (``results=LLVM14``) or announces them
USES_STORE = re.compile(r"results=LLVM14\b|\bLLVM14\.announce\(")


def printed(cell) -> str:
    """Everything a cell wrote to stdout."""
    return "".join(o.get("text", "") for o in cell.get("outputs", []) if o.get("output_type") == "stream")


def test_the_chapters_that_compare_with_llvm_use_its_stored_answers():
    assert len(SHOWS_STORED) >= len(STORED)
    unused = [nb.name for nb in SHOWS_STORED if "LLVMResults(" not in nb.read_text(encoding="utf-8")]
    assert not unused, unused


@pytest.mark.parametrize("notebook", SHOWS_STORED, ids=lambda nb: nb.name[:2])
def test_with_llvm_hidden_each_llvm_cell_says_it_shows_the_stored_result(notebook, monkeypatch):
    """Run the chapter with LLVM hidden: it prints stored_line() (a chapter that silently shows nothing
    fails), every cell that takes LLVM's answers from the store says so, and no cell only says that LLVM
    is not installed ("nothing to compare with")."""
    for name, value in hidden_environment().items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("GCTOY_REQUIRE_ORACLES", raising=False)
    monkeypatch.delenv(REFRESH_ENV, raising=False)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p))
    nb = execute(json.loads(notebook.read_text(encoding="utf-8")), notebook.parent)
    line = stored_line()
    errors = [(i, error_of(cell)) for i, cell in enumerate(nb.cells) if error_of(cell)]
    assert not errors, errors
    code = [(i, cell) for i, cell in enumerate(nb.cells) if cell.cell_type == "code"]
    assert any(line in printed(cell) for _, cell in code), f"{notebook.name} never prints {line!r}"
    silent = [i for i, cell in code if USES_STORE.search(cell.source) and line not in printed(cell)]
    assert not silent, f"{notebook.name}: cells {silent} use LLVM's stored answers without saying so"
    bare = [
        (i, text)
        for i, cell in code
        for text in printed(cell).splitlines()
        if "not installed" in text and not text.startswith(line)
    ]
    assert not bare, f"{notebook.name}: cells that only say LLVM is not installed: {bare}"
