"""Skips for a missing oracle (a tool or reference data the tests compare against), and their count.

Every such skip goes through :func:`skip_missing`, whose reason starts with ``missing WHAT:``.
With ``GCTOY_REQUIRE_ORACLES=1`` (set by ``.ci/run``) tests/conftest.py turns those skips into
failures, so that a run that lost its oracles cannot pass; without it they stay skips, and the
run ends with one line counting the skipped tests per reason either way.
"""

from __future__ import annotations

import os
import re
from typing import NoReturn

import pytest

REQUIRE_ENV = "GCTOY_REQUIRE_ORACLES"

# What can be missing (the WHAT of "missing WHAT: ...").
LLVM14 = "LLVM 14"
LLVM19 = "LLVM 19"
LLI14 = "lli of LLVM 14"
DOT = "Graphviz dot"
CHROMIUM = "Chromium"
SEEDS = "seed specifications"
CORECLR_TABLES = "CoreCLR reference tables"
ORACLES = (LLVM14, LLVM19, LLI14, DOT, CHROMIUM, SEEDS, CORECLR_TABLES)

_TAG = re.compile(r"missing (?P<what>" + "|".join(re.escape(o) for o in ORACLES) + r"): ")


def oracles_required() -> bool:
    """True when GCTOY_REQUIRE_ORACLES=1: a missing oracle is a failure, not a skip."""
    return os.environ.get(REQUIRE_ENV, "") == "1"


def skip_missing(what: str, detail: str) -> NoReturn:
    """Skip the current test because oracle ``what`` is missing (a failure under GCTOY_REQUIRE_ORACLES=1)."""
    assert what in ORACLES, what
    pytest.skip(f"missing {what}: {detail}")


def missing_oracle(reason: str) -> str | None:
    """The oracle a skip reason says is missing, or None for any other skip."""
    match = _TAG.search(reason)
    return match.group("what") if match else None
