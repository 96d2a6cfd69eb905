"""Shared fixtures: the real LLVM tools (an oracle for differential tests) and the seed specs."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import settings

from llvm_tools import LLVMTools, find_llvm

REPO_ROOT = Path(__file__).resolve().parent.parent

# `./run.sh test` (and CI) share two cores between two xdist workers: no per-example deadline,
# the blob that reproduces a failure is printed, and the examples are derived from each test's
# name, so a run is reproducible. `./run.sh nightly` sets GCTOY_RANDOM_PROPERTIES=1 and explores
# new random examples every time.
settings.register_profile("reproducible", deadline=None, print_blob=True, derandomize=True)
settings.register_profile("explore", deadline=None, print_blob=True)
settings.load_profile("explore" if os.environ.get("GCTOY_RANDOM_PROPERTIES") else "reproducible")


@pytest.fixture(scope="session")
def llvm14() -> LLVMTools:
    """`opt`, `llc` and `llvm-readobj` of LLVM 14 (typed pointers by default)."""
    tools, reason = find_llvm(14)
    if tools is None:
        pytest.skip(reason)
    return tools


@pytest.fixture(scope="session")
def llvm19() -> LLVMTools:
    """`opt`, `llc` and `llvm-readobj` of LLVM 19 (opaque pointers only)."""
    tools, _ = find_llvm(19)
    if tools is None:
        pytest.skip("LLVM 19 not installed (apt-get install llvm-19)")
    return tools


@pytest.fixture(scope="session")
def seeds_dir() -> Path:
    """The folder of seed specifications: $GCTOY_SEEDS, else ../shared/seeds beside the repository."""
    configured = os.environ.get("GCTOY_SEEDS")
    path = Path(configured) if configured else REPO_ROOT.parent / "shared" / "seeds"
    if not path.is_dir():
        pytest.skip(f"seed specifications not found at {path} (set GCTOY_SEEDS)")
    return path
