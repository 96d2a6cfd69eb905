"""Shared fixtures (the real LLVM tools, oracles of the differential tests; the seed specs) and the
skip accounting: with GCTOY_REQUIRE_ORACLES=1 a missing oracle fails the test instead of skipping it,
and every run ends with one line counting the skipped tests per reason (tests/oracles.py)."""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import settings

from gctoy.llvm_tools import LLVMTools, find_lli, find_llvm
from oracles import LLI14, LLVM14, LLVM19, REQUIRE_ENV, SEEDS, missing_oracle, oracles_required, skip_missing

REPO_ROOT = Path(__file__).resolve().parent.parent
#: the start of the failure text of a skip that GCTOY_REQUIRE_ORACLES=1 turned into a failure
REQUIRED_PREFIX = f"{REQUIRE_ENV}=1, so a missing oracle fails the test: "

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
        skip_missing(LLVM14, reason)
    return tools


@pytest.fixture(scope="session")
def llvm19() -> LLVMTools:
    """`opt`, `llc` and `llvm-readobj` of LLVM 19 (opaque pointers only)."""
    tools, reason = find_llvm(19)
    if tools is None:
        skip_missing(LLVM19, reason)
    return tools


@pytest.fixture(scope="session")
def lli14() -> Path:
    """LLVM 14's `lli`, found by version like the other tools."""
    path, reason = find_lli(14)
    if path is None:
        skip_missing(LLI14, reason)
    return path


@pytest.fixture(scope="session")
def seeds_dir() -> Path:
    """The folder of seed specifications: $GCTOY_SEEDS, else ../shared/seeds beside the repository."""
    configured = os.environ.get("GCTOY_SEEDS")
    path = Path(configured) if configured else REPO_ROOT.parent / "shared" / "seeds"
    if not path.is_dir():
        skip_missing(SEEDS, f"not found at {path} (set GCTOY_SEEDS)")
    return path


def _skip_reason(report: pytest.TestReport | pytest.CollectReport) -> str:
    """The text of a skip report's reason, without pytest's 'Skipped: '."""
    longrepr = report.longrepr
    reason = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)
    return reason.removeprefix("Skipped: ")


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    """Under GCTOY_REQUIRE_ORACLES=1, a skip for a missing oracle becomes a failure."""
    report = yield
    if report.skipped and oracles_required() and not hasattr(report, "wasxfail"):
        reason = _skip_reason(report)
        if missing_oracle(reason):
            report.outcome = "failed"
            report.longrepr = REQUIRED_PREFIX + reason
    return report


def skip_counts(stats: dict[str, list]) -> Counter[str]:
    """Skipped tests per reason (oracles by name), with the oracle skips that were made failures."""
    counts: Counter[str] = Counter()
    for report in stats.get("skipped", []):
        reason = _skip_reason(report)
        what = missing_oracle(reason)
        counts[f"missing {what}" if what else reason] += 1
    for key in ("failed", "error"):
        for report in stats.get(key, []):
            text = str(getattr(report, "longrepr", "") or "")
            if text.startswith(REQUIRED_PREFIX):
                counts[f"missing {missing_oracle(text)} (failed: {REQUIRE_ENV}=1)"] += 1
    return counts


def pytest_terminal_summary(terminalreporter, exitstatus: int, config: pytest.Config) -> None:
    """One line: how many tests were skipped for each reason (across xdist workers)."""
    counts = skip_counts(terminalreporter.stats)
    if counts:
        parts = [f"{reason}: {n}" for reason, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))]
        line = "; ".join(parts)
    else:
        line = "none"
    terminalreporter.write_line(f"skipped tests per reason: {line}")
    book = book_time(terminalreporter.stats)
    if book is not None:
        seconds, notebooks = book
        terminalreporter.write_line(
            f"book under nbval: {seconds:.1f} s of cell time in {notebooks} notebooks (the book's budget: 90 s)")


def book_time(stats: dict) -> tuple[float, int] | None:
    """The summed duration of the notebook cells run under nbval, and the number of notebooks (None: none ran)."""
    seconds = 0.0
    notebooks = set()
    for reports in stats.values():
        for report in reports:
            nodeid = getattr(report, "nodeid", "")
            if ".ipynb::" in nodeid and getattr(report, "when", None) in ("setup", "call", "teardown"):
                seconds += getattr(report, "duration", 0.0)
                notebooks.add(nodeid.split("::")[0])
    return (seconds, len(notebooks)) if notebooks else None
