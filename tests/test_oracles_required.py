"""With LLVM hidden, GCTOY_REQUIRE_ORACLES=1 makes the tests that need it fail; without it they skip.

A few LLVM 14 tests run in a child pytest with
``GCTOY_LLVM_PATH=`` (gctoy.llvm_tools then finds no LLVM tool). The required run goes through an xdist worker, as
`./run.sh test` does, so it also shows that the per-reason count sees the workers' reports.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from gctoy.llvm_tools import hidden_environment
from oracles import REQUIRE_ENV

REPO_ROOT = Path(__file__).resolve().parent.parent
SUBSET = ["tests/test_llvm_tools.py", "-k", "llvm14_tools or lli14 or run_opt"]


def _run_hidden(require: bool, workers: list[str]) -> subprocess.CompletedProcess[str]:
    """The subset in a child pytest with LLVM hidden, with or without GCTOY_REQUIRE_ORACLES=1."""
    env = hidden_environment()
    env.pop(REQUIRE_ENV, None)
    if require:
        env[REQUIRE_ENV] = "1"
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO_ROOT), env.get("PYTHONPATH", "")) if p)
    cmd = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-rs", *workers, *SUBSET]
    return subprocess.run(cmd, cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=300)


def test_hidden_llvm_fails_the_run_when_oracles_are_required():
    r = _run_hidden(require=True, workers=["-n", "1"])
    out = r.stdout
    assert r.returncode == 1, out + r.stderr
    assert "4 errors" in out and "passed" not in out and "skipped" not in out.splitlines()[-1], out
    assert f"{REQUIRE_ENV}=1, so a missing oracle fails the test: missing LLVM 14: LLVM 14 not installed" in out
    assert (f"skipped tests per reason: missing LLVM 14 (failed: {REQUIRE_ENV}=1): 3; "
            f"missing lli of LLVM 14 (failed: {REQUIRE_ENV}=1): 1") in out, out


def test_hidden_llvm_skips_with_a_reason_otherwise():
    r = _run_hidden(require=False, workers=[])
    out = r.stdout
    assert r.returncode == 0, out + r.stderr
    assert "4 skipped" in out, out
    assert "missing LLVM 14: LLVM 14 not installed: opt, llc, llvm-readobj not found (GCTOY_LLVM_PATH is empty" in out
    assert "skipped tests per reason: missing LLVM 14: 3; missing lli of LLVM 14: 1" in out, out
