"""Every chapter runs where LLVM is not installed (Binder, conda): nbval with LLVM hidden from gctoy."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from gctoy.llvm_tools import hidden_environment

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
