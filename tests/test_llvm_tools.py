"""gctoy.llvm_tools finds each LLVM tool by release (lli too), can hide LLVM, and runs the tools."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from gctoy.llvm_tools import ENV_PATH, find_lli, find_llvm, find_tool, hidden_environment, run_opt, tool_major_version

VALID = "define i32 @answer() {\n  ret i32 42\n}\n"
INVALID = "define i32 @answer() {\n  ret i64 42\n}\n"


def _fake_tool(directory: Path, name: str, version: int) -> Path:
    """A script that answers `--version` like LLVM `version`'s tools."""
    path = directory / name
    path.write_text(f"#!/bin/sh\necho 'LLVM (http://llvm.org/):'\necho '  LLVM version {version}.0.1'\n")
    path.chmod(0o755)
    return path


def test_llvm14_tools_are_release_14(llvm14):
    for tool in (llvm14.opt, llvm14.llc, llvm14.llvm_readobj):
        assert tool_major_version(tool) == 14


def test_lli14_is_release_14(lli14):
    assert tool_major_version(lli14) == 14


def test_run_opt_round_trips_valid_ir(llvm14):
    result = run_opt(llvm14.opt, ["-passes=verify", "-S"], VALID)
    assert result.returncode == 0, result.stderr
    assert "ret i32 42" in result.stdout


def test_run_opt_reports_invalid_ir(llvm14):
    result = run_opt(llvm14.opt, ["-passes=verify", "-S"], INVALID)
    assert result.returncode != 0
    assert "error" in result.stderr


def test_llvm19_opt_is_release_19(llvm19):
    assert tool_major_version(llvm19.opt) == 19


def test_seeds_dir_holds_the_specifications(seeds_dir):
    assert any(seeds_dir.glob("*.rst"))


def test_an_unversioned_lli_of_another_release_is_not_llvm_14s(tmp_path, monkeypatch):
    lli19 = _fake_tool(tmp_path, "lli", 19)
    monkeypatch.setenv(ENV_PATH, str(tmp_path))
    path, reason = find_lli(14)
    assert path is None and "lli of LLVM 14 not found" in reason and str(tmp_path) in reason
    assert find_lli(19) == (lli19, "")


def test_the_search_path_takes_versioned_names_first(tmp_path, monkeypatch):
    first, second = tmp_path / "a", tmp_path / "b"
    first.mkdir()
    second.mkdir()
    plain = _fake_tool(first, "opt", 14)
    versioned = _fake_tool(second, "opt-14", 14)
    _fake_tool(second, "llc", 13)
    monkeypatch.setenv(ENV_PATH, os.pathsep.join([str(first), str(second)]))
    assert find_tool("opt", 14) == plain  # directories in order, each: NAME-N then NAME
    monkeypatch.setenv(ENV_PATH, str(second))
    assert find_tool("opt", 14) == versioned
    assert find_tool("llc", 14) is None
    tools, reason = find_llvm(14)
    assert tools is None and "llc, llvm-readobj not found" in reason


@pytest.mark.parametrize("version", [14, 19])
def test_an_empty_search_path_hides_llvm(monkeypatch, version):
    monkeypatch.setenv(ENV_PATH, "")
    tools, reason = find_llvm(version)
    assert tools is None
    assert reason == (f"LLVM {version} not installed: opt, llc, llvm-readobj not found "
                      f"({ENV_PATH} is empty: LLVM hidden) (apt-get install llvm-{version})")
    assert find_lli(version)[0] is None
    assert hidden_environment({"PATH": "/usr/bin"}) == {"PATH": "/usr/bin", ENV_PATH: ""}


def test_without_the_variable_the_debian_directories_are_searched(monkeypatch, llvm14):
    monkeypatch.delenv(ENV_PATH, raising=False)
    monkeypatch.setenv("PATH", "/nonexistent")
    if Path("/usr/lib/llvm-14/bin/opt").is_file():
        assert find_tool("opt", 14) == Path("/usr/lib/llvm-14/bin/opt")
    else:
        assert find_tool("opt", 14) is None
