"""The comparison benchmarks run end to end on small inputs and print the rows they promise."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench"


def _run(script: str, *args: str) -> str:
    r = subprocess.run([sys.executable, str(BENCH / script), *args], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    return r.stdout


def test_designs_bench_compares_three_designs():
    out = _run("bench_designs.py", "--calls", "50", "--seeds", "11", "--size", "6")
    for design in ("statepoint", "shadow-stack", "x86-gcinfo"):
        assert f"  total {design}" in out
    assert "x86-gcinfo/statepoint:" in out and "instructions per call" in out


def test_gcinfo_bench_prints_every_encoding():
    out = _run("bench_gcinfo.py", "--seeds", "1", "--sizes", "4", "8")
    for name in ("EBP, partial", "EBP-less, partial", "EBP, full", "EBP-less, full", "growth per doubling"):
        assert name in out
    assert "ratio (time per byte, GC info / stack map)" in out


def test_analysis_bench_compares_with_the_walk():
    out = _run("bench_analysis.py", "--sizes", "40,80", "--repeat", "1")
    assert "multiple of the reference walk" in out and "growth factor per doubling" in out
    assert len([line for line in out.splitlines() if line.startswith(("PASS ", "FAIL "))]) == 2


def test_emu_bench_compares_with_the_python_counter():
    out = _run("bench_emu.py", "--iterations", "20000", "--repeat", "1")
    assert "Python block-hook counter (ref.)" in out
    assert "x the Python counter" in out and "of its rate" in out


def test_gcinfo_fuzz_bench_compares_mutated_with_valid_input():
    out = _run("bench_gcinfo_fuzz.py", "--blobs", "200", "--repeat", "1")
    for name in ("whole-method blobs", "EBP-less pointer tables"):
        assert f"{name}: mutated input is" in out


def test_many_statepoints_bench_compares_with_llc_and_fits_the_growth(llvm14):
    out = _run("bench_many_statepoints.py", "--sizes", "20,40,80", "--repeat", "1")
    assert "gctoy llc / llc" in out and "least of 1" in out
    verdicts = [line for line in out.splitlines() if line.startswith(("PASS ", "FAIL "))]
    assert len(verdicts) == 4, out  # the ratio and the fitted growth, for gctoy llc and gctoy run
    assert sum("fitted over 20..80" in line for line in verdicts) == 2, out
    assert "llc -O2 itself grows" in out


def test_workbench_bench_times_runs_next_to_gctoy_run():
    out = _run("bench_workbench.py", "--sizes", "12,25", "--repeat", "1")
    assert "workbench Run (s)" in out and "gctoy run --stress (s)" in out and "IR after" in out
    assert "growth from" in out and "the IR after the passes" in out and "target: one Run" in out
