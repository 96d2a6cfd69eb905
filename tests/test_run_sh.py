"""run.sh's setup: with GCTOY_REQUIRE_ORACLES=1 a tool it cannot install is an error, else a warning;
and CI (.ci/run) runs `./run.sh test` with GCTOY_REQUIRE_ORACLES=1.

run.sh is sourced in a child bash (sourcing defines its functions and runs nothing), the checks
for installed tools and apt-get are replaced by shell functions, and `setup_system` is called.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent


def _setup_system(tmp_path: Path, *, require: bool, llvm19: bool = False, chromium: bool = True,
                  apt: bool = True) -> subprocess.CompletedProcess[str]:
    """Run run.sh's setup_system with LLVM 14 installed, the rest as given, and every apt-get install failing."""
    fake_bin = tmp_path / "bin"
    fake_bin.mkdir(exist_ok=True)
    (fake_bin / "dot").write_text("#!/bin/sh\nexit 0\n")
    (fake_bin / "dot").chmod(0o755)
    script = f"""
source ./run.sh
have_llvm() {{ [ "$1" = 14 ] || [ {int(llvm19)} = 1 ]; }}
have_unversioned_llvm() {{ return 0; }}
have_chromium() {{ [ {int(chromium)} = 1 ]; }}
apt_usable() {{ [ {int(apt)} = 1 ]; }}
apt_install() {{ echo "apt_install $*" >&2; return 1; }}
setup_system
echo "setup finished"
"""
    env = {k: v for k, v in os.environ.items() if k not in ("GCTOY_REQUIRE_ORACLES", "GCTOY_NO_APT")}
    env["PATH"] = f"{fake_bin}{os.pathsep}{env.get('PATH', '')}"
    if require:
        env["GCTOY_REQUIRE_ORACLES"] = "1"
    return subprocess.run(["bash", "-c", script], cwd=REPO_ROOT, env=env, capture_output=True, text=True,
                          timeout=60)


def test_a_missing_llvm19_is_an_error_when_oracles_are_required(tmp_path):
    r = _setup_system(tmp_path, require=True)
    assert r.returncode == 2 and "setup finished" not in r.stdout, r.stderr
    assert "apt_install llvm-19" in r.stderr
    assert "run.sh: error: llvm-19 could not be installed" in r.stderr and "GCTOY_REQUIRE_ORACLES=1" in r.stderr


def test_a_missing_llvm19_is_a_warning_otherwise(tmp_path):
    r = _setup_system(tmp_path, require=False)
    assert r.returncode == 0 and "setup finished" in r.stdout, r.stderr
    assert "run.sh: warning: llvm-19 could not be installed" in r.stderr


@pytest.mark.parametrize("require", [True, False])
def test_chromium_is_treated_like_the_others(tmp_path, require):
    r = _setup_system(tmp_path, require=require, llvm19=True, chromium=False)
    assert "apt_install chromium" in r.stderr
    if require:
        assert r.returncode == 2 and "run.sh: error: chromium could not be installed" in r.stderr, r.stderr
    else:
        assert r.returncode == 0 and "run.sh: warning: chromium could not be installed" in r.stderr, r.stderr


def test_without_apt_get_a_missing_optional_tool_is_an_error_when_required(tmp_path):
    r = _setup_system(tmp_path, require=True, apt=False)
    assert r.returncode == 2 and "missing: LLVM 19, and apt-get cannot be used here" in r.stderr, r.stderr
    relaxed = _setup_system(tmp_path, require=False, apt=False)
    assert relaxed.returncode == 0 and "note: LLVM 19 is not installed" in relaxed.stderr, relaxed.stderr


def test_nothing_missing_installs_nothing(tmp_path):
    r = _setup_system(tmp_path, require=True, llvm19=True)
    assert r.returncode == 0 and "setup finished" in r.stdout and "apt_install" not in r.stderr, r.stderr


def test_ci_runs_the_tests_with_every_oracle_required():
    lines = [line.strip() for line in (REPO_ROOT / ".ci" / "run").read_text().splitlines()]
    # the README's command; CI may only add pytest's report of the slowest tests to it
    runs = [i for i, line in enumerate(lines) if line.split()[:2] == ["./run.sh", "test"]]
    assert len(runs) == 1, lines
    extra = lines[runs[0]].split()[2:]
    assert all(arg.startswith("--durations=") for arg in extra), extra
    assert "export GCTOY_REQUIRE_ORACLES=1" in lines
    assert lines.index("export GCTOY_REQUIRE_ORACLES=1") < runs[0]
