"""ruff (lint and imports) over the whole repository, ruff's formatter over gctoy and tools, and mypy over
the packages that type-check clean.

The configuration is in pyproject.toml ([tool.ruff], [tool.mypy]). The mypy list grows as packages are
brought to zero errors; a package on it that gains an error fails here.
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: packages with no mypy error: every package of gctoy and tools, none is left out
TYPED_CLEAN_PACKAGES = ["gctoy/ir", "gctoy/coreclr", "gctoy/emu", "gctoy/passes", "gctoy/stackmap", "gctoy/runtime",
                        "gctoy/viz", "gctoy/codegen",
                        "gctoy/widgets", "gctoy/labs", "tools"]
#: ... and every module at the top of the package (a new one joins the list by being there)
TYPED_CLEAN = TYPED_CLEAN_PACKAGES + sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "gctoy").glob("*.py"))


def _mypy(*targets: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mypy", "--no-incremental", "--follow-imports=silent", *targets],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)


def test_ruff_finds_nothing():
    r = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "."], cwd=ROOT,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]


def test_ruff_sees_a_planted_problem(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("import os\n")
    r = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "--config",
                        str(ROOT / "pyproject.toml"), str(bad)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 1 and "F401" in r.stdout, r.stdout


def test_ruff_format_changes_nothing():
    """gctoy and tools are laid out as ``ruff format`` lays them out (but the tables pyproject.toml excludes)."""
    r = subprocess.run([sys.executable, "-m", "ruff", "format", "--check", "--no-cache"], cwd=ROOT,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, "run 'ruff format' on: " + r.stdout[-4000:] + r.stderr[-2000:]


def test_ruff_format_sees_a_planted_problem(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("x = {'a':1}\n")
    r = subprocess.run([sys.executable, "-m", "ruff", "format", "--check", "--no-cache", "--config",
                        str(ROOT / "pyproject.toml"), str(bad)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 1 and "bad.py" in r.stdout, r.stdout


def test_mypy_finds_nothing_in_the_clean_packages():
    r = _mypy(*TYPED_CLEAN)
    assert r.returncode == 0 and "Success" in r.stdout, r.stdout[-4000:] + r.stderr[-2000:]


def test_mypy_sees_a_planted_problem(tmp_path):
    """The configuration checks what the clean list relies on: Optional misuse, a wrong Literal, and an
    ignore without an error code."""
    bad = tmp_path / "bad.py"
    bad.write_text("from gctoy.runtime.trace_views import Marker\n"
                   "def f(x: int | None) -> int:\n"
                   "    return x + 1\n"
                   "m: Marker = 'here'\n"
                   "y: int = 'a'  # type: ignore\n")
    r = _mypy("--config-file", str(ROOT / "pyproject.toml"), str(bad))
    assert r.returncode == 1, r.stdout
    assert "[operator]" in r.stdout and "[assignment]" in r.stdout and "[ignore-without-code]" in r.stdout, r.stdout
