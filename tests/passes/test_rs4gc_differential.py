"""gctoy's RewriteStatepointsForGC against LLVM 14's and LLVM 19's, on generated GC programs.

Each generated function (tests/gcprog_gen.py) goes through both passes, once with LLVM 14 as
the oracle (typed pointers) and once with LLVM 19 (the same functions printed with opaque
``ptr``; skipped where LLVM 19 is not installed). Against LLVM 19, gctoy's pass runs as
``rewrite-statepoints-for-gc<llvm=19>`` and LLVM's with ``-rs4gc-remat-derived-at-uses=false``
(see tests/rs4gc_diff.py). gctoy's output, printed in the oracle's
pointer style, must pass that release's ``opt -passes=verify`` and
``opt -passes='verify<safepoint-ir>'``, and at every call that became a statepoint the
relocated ``(base, derived)`` pairs and the rematerialized values must be those of LLVM,
as tests/rs4gc_oracle.py reads them back in terms of the input's values (so names and
instruction order may differ; what is relocated where may not).

Functions are checked 50 to a module (one ``opt`` process per oracle each) and only looked at one by
one when a module shows a problem. A failure prints the function reduced by
tests/rs4gc_diff.py's shrinker, what differs, and both outputs.

``GCTOY_DIFF_COUNT`` (default 500) sets how many functions, ``GCTOY_DIFF_SEED`` (default 1)
the first seed; ``GCTOY_DIFF_SIZES`` (comma-separated) the sizes drawn from.
"""
from __future__ import annotations

import os
import random

import pytest

from gcprog_gen import generate_function, module_of
from rs4gc_diff import check_batch, oracle_of, report

COUNT = int(os.environ.get("GCTOY_DIFF_COUNT", "500"))
FIRST_SEED = int(os.environ.get("GCTOY_DIFF_SEED", "1"))
SIZES = tuple(int(s) for s in os.environ.get("GCTOY_DIFF_SIZES", "6,10,16,24,32,48,64,96").split(","))
BATCH = 50


def size_of(seed: int) -> int:
    """The size of the function of ``seed`` (a fixed draw from SIZES)."""
    return random.Random(seed).choice(SIZES)


CASES = [(s, size_of(s)) for s in range(FIRST_SEED, FIRST_SEED + COUNT)]
BATCHES = [CASES[i:i + BATCH] for i in range(0, len(CASES), BATCH)]


@pytest.fixture(scope="module", params=["llvm14", "llvm19"])
def oracle(request):
    """LLVM 14 (typed pointers), then LLVM 19 (opaque pointers); each skipped where not installed."""
    return oracle_of(request.getfixturevalue(request.param))


@pytest.mark.slow
@pytest.mark.parametrize("batch", BATCHES, ids=[f"seeds{b[0][0]}-{b[-1][0]}" for b in BATCHES])
def test_gctoy_rs4gc_relocates_what_llvm_relocates(oracle, batch):
    failures = check_batch(oracle, batch, generate_function, module_of)
    if not failures:
        return
    lines = [f"{len(failures)} of {len(batch)} generated functions disagree with {oracle.name}:"]
    lines += [f"  seed={f.seed} size={f.size}: {f.outcome.kind}" for f in failures]
    lines += ["", "The first one, reduced:", "", report(oracle, failures[0])]
    pytest.fail("\n".join(lines), pytrace=False)
