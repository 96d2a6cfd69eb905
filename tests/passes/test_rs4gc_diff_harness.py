"""The differential harness itself (tests/rs4gc_diff.py): it notices a disagreement, and its shrinker
keeps the IR valid and makes a failing function small.

LLVM's own pass with rematerialization turned off (``-spp-rematerialization-threshold=0``)
stands in for a wrong gctoy here, so these tests do not depend on gctoy's pass.
"""
from __future__ import annotations

import subprocess

import pytest

import rs4gc_diff
from gcprog_gen import generate, generate_function, module_of
from gctoy.ir import parse_module, print_module
from rs4gc_oracle import facts_by_call, run_rs4gc

CASES = [(s, 40) for s in range(300, 310)]


def instructions(text: str) -> int:
    body = text[text.index("define "):]
    return sum(1 for line in body.splitlines() if line.startswith("  "))


@pytest.fixture
def remat_off(llvm14, monkeypatch):
    """Make the harness take 'LLVM without rematerialization' for gctoy's pass."""
    def no_remat(text: str, options: str = "") -> str:
        return run_rs4gc(llvm14.opt, text, ["-spp-rematerialization-threshold=0"])

    monkeypatch.setattr(rs4gc_diff, "gctoy_rs4gc", no_remat)


def test_compare_facts_sees_relocation_instead_of_rematerialization(llvm14):
    src = module_of([generate_function(s, n) for s, n in CASES])
    theirs = facts_by_call(run_rs4gc(llvm14.opt, src), src)
    other = facts_by_call(run_rs4gc(llvm14.opt, src, ["-spp-rematerialization-threshold=0"]), src)
    assert rs4gc_diff.compare_facts(theirs, theirs) == {}
    diff = rs4gc_diff.compare_facts(theirs, other)
    assert len(diff) >= 5
    text = "\n".join(diff.values())
    assert "rematerialized values differ" in text and "relocated pairs differ" in text


def test_check_batch_reports_each_disagreeing_function(llvm14, remat_off):
    failures = rs4gc_diff.check_batch(llvm14.opt, CASES, generate_function, module_of)
    assert failures and {f.outcome.kind for f in failures} <= {"relocations differ", "rematerialization differs"}
    for f in failures:
        assert f"@g{f.seed}(" in f.source and f.outcome.llvm_out and f.outcome.ours_out


def test_every_shrinking_edit_keeps_the_function_valid(llvm14):
    text = generate(5, 30)
    fn = next(parse_module(text).definitions())
    edits = rs4gc_diff._edits(fn)
    assert {e[0] for e in edits} >= {"delete", "branch"}
    bad = []
    for edit in edits:
        m = parse_module(text)
        rs4gc_diff._apply(next(m.definitions()), edit)
        cand = print_module(m)
        r = subprocess.run([str(llvm14.opt), "-passes=verify", "-disable-output"], input=cand,
                           capture_output=True, text=True)
        if r.returncode != 0:
            bad.append((edit, r.stderr))
    assert not bad, bad[:3]


def test_report_gives_a_small_reproducer_and_both_outputs(llvm14, remat_off):
    failures = rs4gc_diff.check_batch(llvm14.opt, CASES, generate_function, module_of)
    first = failures[0]
    text = rs4gc_diff.report(llvm14.opt, first, tries=60)  # measured: 25 tries reach 8 of 41 instructions
    assert f"seed={first.seed}" in text
    for part in ("--- reduced input", "--- what differs", "--- LLVM 14 output ---", "--- gctoy output ---"):
        assert part in text
    reduced = text.split("--- reduced input")[1].split("--- what differs")[0]
    assert instructions(reduced) < instructions(first.source) / 2
