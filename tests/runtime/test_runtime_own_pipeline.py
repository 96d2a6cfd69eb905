"""The whole of gctoy, end to end: its RS4GC, its x86-64 lowering, its moving collector.

Each program of runtime_programs.py runs three ways: gctoy's pipeline with no collector, gctoy's
pipeline collecting at every statepoint (heap verified, from-space poisoned; with a stack slot per
value and with the register allocator), and LLVM's ``llc -O2`` object under the same collector.  All must print the same and return the same.
A lowering that forgets a relocation is caught.
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from gctoy.ir import parse_module  # noqa: E402
from gctoy.passes import run  # noqa: E402
from gctoy.runtime.run import run_module, run_object  # noqa: E402
from runtime_programs import EXPECTED, PROGRAMS, compile_program  # noqa: E402


def _ours(text: str):
    m = parse_module(text)
    run(m, "rewrite-statepoints-for-gc")
    return m


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_same_output_three_ways(name, llvm14, tmp_path):
    calm = run_module(_ours(PROGRAMS[name]), gc="none")
    stressed = run_module(_ours(PROGRAMS[name]), stress=True, verify=True, semispace_size=4096)
    registers = run_module(_ours(PROGRAMS[name]), stress=True, verify=True, semispace_size=4096, regalloc=True)
    theirs = run_object(compile_program(PROGRAMS[name], tmp_path, llvm14, name=name), stress=True, verify=True,
                        semispace_size=4096)
    assert (calm.printed, calm.result) == EXPECTED[name]
    assert (stressed.printed, stressed.result) == EXPECTED[name]
    assert (registers.printed, registers.result) == EXPECTED[name]
    assert registers.stats.gc.collections == stressed.stats.gc.collections == registers.stats.verified
    assert (theirs.printed, theirs.result) == EXPECTED[name]
    assert stressed.stats.gc.collections > 0 and stressed.stats.gc.objects_copied > 0


@pytest.mark.parametrize("regalloc", [False, True], ids=["slots", "registers"])
def test_a_lowering_that_skips_a_relocation_is_caught(regalloc):
    """Drop one (base, derived) pair from every stack map record: the collector then misses a root."""
    from dataclasses import replace

    from gctoy.runtime import run as runtime_run
    from gctoy.runtime.run import Runtime, load_compiled

    loaded = load_compiled(_ours(PROGRAMS["list"]), regalloc)
    healthy = Runtime(loaded, stress=True, verify=True, semispace_size=4096).run()
    assert (healthy.printed, healthy.result) == EXPECTED["list"]  # unmutated, the same run is right
    sm = loaded.stackmap
    broken_records = tuple(replace(r, locations=r.locations[:-2]) if len(r.locations) > 3 else r
                           for r in sm.records)
    assert broken_records != sm.records
    broken = replace(loaded, stackmap=replace(sm, records=broken_records))
    with pytest.raises(Exception) as failure:
        Runtime(broken, stress=True, verify=True, semispace_size=4096).run()
    assert isinstance(failure.value, runtime_run.GCToyError)


def test_cli_runs_ir(tmp_path):
    src = tmp_path / "list.ll"
    src.write_text(PROGRAMS["list"], encoding="utf-8")
    r = subprocess.run([sys.executable, "-m", "gctoy.cli", "run", str(src), "--stress", "--verify-heap"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    printed, result = EXPECTED["list"]
    assert r.stdout.splitlines() == [str(v) for v in printed] + [f"result: {result}"]
    asm = subprocess.run([sys.executable, "-m", "gctoy.cli", "llc", str(src)], capture_output=True, text=True,
                         timeout=120)
    assert asm.returncode == 0 and "LLVM StackMap Version: 3" in asm.stdout
