"""Generated allocation-heavy programs, run three ways, must agree line for line.

For every program of ``tests/runnable_gen.py`` (fixed seeds; ``GCTOY_RUN_COUNT`` for more):

1. LLVM's ``lli`` runs the plain IR with a malloc shim (``tests/lli_shim.py``): the oracle;
2. gctoy's pipeline: gctoy's RS4GC, gctoy's x86-64 lowering, the moving collector collecting
   at *every* statepoint, heap verified and from-space poisoned after each collection;
3. LLVM's pipeline: ``opt -passes=rewrite-statepoints-for-gc``, ``llc -O2 -filetype=obj``,
   the object under the same stressed, verified collector using LLVM's stack map;
4. gctoy's pipeline again with the register allocator (``regalloc=True``): GC pointers in
   callee-saved registers (Register locations, found in outer frames through the prologues'
   CFI) or spill slots, under the same stressed, verified collector.

What is compared: every ``@print_i64`` line and ``@main``'s result. Every program must have
collected at least once in both runs of ours.

Batching: programs are combined into one module per batch (functions renamed ``@pK_...``), so
each batch costs one ``lli``, one ``opt``, one ``llc`` and one gctoy RS4GC; those external
tools run in threads while gctoy compiles. Each pipeline then runs the batch's mains one
after another on one runtime (a fresh call stack per main; the heap keeps the earlier
programs' garbage, which the next collection drops). ``test_fresh_runtime_per_program`` runs a
few programs the plain way, through ``run_module`` and ``run_object``, one runtime each.

The batches are split over two test classes, so that ``pytest -n 2 --dist loadscope`` runs
them on both workers.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent)]

from gctoy.ir import parse_module  # noqa: E402
from gctoy.passes import run as run_pass  # noqa: E402
from gctoy.runtime.elfload import load_object  # noqa: E402
from gctoy.runtime.run import Runtime, load_compiled, run_module, run_object  # noqa: E402
from lli_shim import run_lli_batch  # noqa: E402
from runnable_gen import combine_programs, generate_program  # noqa: E402

COUNT = int(os.environ.get("GCTOY_RUN_COUNT", "200"))
SIZE = 12  # the size of single programs below; batches vary it with the seed
BATCH = 25
SEMISPACE = 1 << 20
FIRST_SEED = 1000
SEEDS = list(range(FIRST_SEED, FIRST_SEED + COUNT))
BATCHES = [SEEDS[i:i + BATCH] for i in range(0, len(SEEDS), BATCH)]


def size_of(seed: int) -> int:
    """Programs of 4 to 20 phases."""
    return 4 + seed % 17


@dataclass(frozen=True)
class Outcome:
    printed: list[int]
    result: int
    collections: int

    @property
    def output(self) -> tuple[list[int], int]:
        return self.printed, self.result


@pytest.fixture(scope="module")
def lli(llvm14, lli14):
    """LLVM 14's lli (the other LLVM 14 tools are needed too)."""
    return lli14


def gctoy_compile_module(text: str):
    module = parse_module(text)
    run_pass(module, "rewrite-statepoints-for-gc")
    return module


def gctoy_compile(text: str, regalloc: bool = False):
    return load_compiled(gctoy_compile_module(text), regalloc)


def llvm_compile(text: str, llvm14, workdir: Path) -> Path:
    src, rewritten, obj = workdir / "batch.ll", workdir / "batch.rs4gc.ll", workdir / "batch.o"
    src.write_text(text)
    for cmd in (
        [str(llvm14.opt), "-passes=rewrite-statepoints-for-gc", "-S", str(src), "-o", str(rewritten)],
        [str(llvm14.llc), "-O2", "-filetype=obj", str(rewritten), "-o", str(obj)],
    ):
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, f"{cmd[0]} failed: {r.stderr[:2000]}"
    return obj


def run_entries(loaded, count: int, stress: bool = True, verify: bool = True) -> list[Outcome]:
    """Run ``@p0_main`` ... ``@p{count-1}_main`` in turn on one runtime."""
    runtime = Runtime(loaded, stress=stress, verify=verify, semispace_size=SEMISPACE)
    outcomes = []
    for k in range(count):
        printed_before, collections_before = len(runtime.printed), len(runtime.collections)
        result = runtime.run(entry=f"p{k}_main")
        outcomes.append(Outcome(runtime.printed[printed_before:], result.result,
                                len(runtime.collections) - collections_before))
    return outcomes


def prefixes(n: int) -> list[str]:
    return [f"p{k}_" for k in range(n)]


def differential(seeds: list[int], llvm14, lli) -> list[str]:
    """Run one batch three ways; a list of disagreements (empty when all agree)."""
    programs = [generate_program(s, size_of(s)) for s in seeds]
    combined = combine_programs(programs, prefixes(len(programs)))
    with tempfile.TemporaryDirectory() as tmp, ThreadPoolExecutor(2) as pool:
        oracle_future = pool.submit(run_lli_batch, programs, lli)
        object_future = pool.submit(llvm_compile, combined, llvm14, Path(tmp))
        # one parse and one RS4GC serve both of gctoy's lowerings: lowering leaves the module as it was
        # (checked here), so the second lowering compiles what a fresh parse and RS4GC would give
        module = gctoy_compile_module(combined)
        rewritten = str(module)
        ours = run_entries(load_compiled(module), len(programs))
        assert str(module) == rewritten, "lowering changed the module"
        registers = run_entries(load_compiled(module, regalloc=True), len(programs))
        theirs = run_entries(load_object(object_future.result()), len(programs))
        oracle = oracle_future.result()
    problems = []
    for seed, want, mine, llc, reg in zip(seeds, oracle, ours, theirs, registers):
        where = f"generate_program({seed}, {size_of(seed)})"
        if mine.output != want:
            problems.append(f"{where}: gctoy pipeline {mine.output} != lli {want}")
        if reg.output != want:
            problems.append(f"{where}: gctoy pipeline with registers {reg.output} != lli {want}")
        if reg.collections == 0:
            problems.append(f"{where}: no collection with registers")
        if llc.output != want:
            problems.append(f"{where}: llc object {llc.output} != lli {want}")
        if mine.collections == 0 or llc.collections == 0:
            problems.append(f"{where}: no collection ({mine.collections} / {llc.collections})")
        if not want[0]:
            problems.append(f"{where}: printed nothing")
    return problems


class TestBatchesA:
    @pytest.mark.parametrize("seeds", BATCHES[0::2], ids=lambda s: f"seeds{s[0]}-{s[-1]}")
    def test_three_ways_agree(self, seeds, llvm14, lli):
        problems = differential(seeds, llvm14, lli)
        assert not problems, "\n".join(problems)


class TestBatchesB:
    @pytest.mark.parametrize("seeds", BATCHES[1::2], ids=lambda s: f"seeds{s[0]}-{s[-1]}")
    def test_three_ways_agree(self, seeds, llvm14, lli):
        problems = differential(seeds, llvm14, lli)
        assert not problems, "\n".join(problems)


# ---------------------------------------------------------------- the plain API, one runtime each


@pytest.mark.parametrize("seed", [7, 8, 9])
def test_fresh_runtime_per_program(seed, llvm14, lli, tmp_path):
    text = generate_program(seed, SIZE)
    want = run_lli_batch([text], lli)[0]
    ours = run_module(gctoy_compile_module(text), stress=True, verify=True, semispace_size=SEMISPACE)
    obj = llvm_compile(text, llvm14, tmp_path)
    theirs = run_object(obj, stress=True, verify=True, semispace_size=SEMISPACE)
    assert (ours.printed, ours.result) == want
    assert (theirs.printed, theirs.result) == want
    assert ours.stats.collections > 0 and theirs.stats.collections > 0
    assert ours.stats.verified == ours.stats.collections
    registers = run_module(gctoy_compile_module(text), stress=True, verify=True, semispace_size=SEMISPACE,
                           regalloc=True)
    assert (registers.printed, registers.result) == want
    assert registers.stats.collections == ours.stats.collections == registers.stats.verified
    # without a collector the same program gives the same output too
    calm = run_module(gctoy_compile_module(text), gc="none")
    assert (calm.printed, calm.result) == want and calm.stats.collections == 0


# ---------------------------------------------------------------- the generator


def test_generator_is_deterministic_and_valid(llvm14):
    assert generate_program(3, SIZE) == generate_program(3, SIZE)
    assert generate_program(3, SIZE) != generate_program(4, SIZE)
    texts = [generate_program(s, size) for s in range(30) for size in (1, 4, 20)]
    r = subprocess.run([str(llvm14.opt), "-passes=verify", "-disable-output", "-"],
                       input=combine_programs(texts, prefixes(len(texts))), capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr[:2000]
    for t in texts[:5]:
        r = subprocess.run([str(llvm14.opt), "-passes=verify", "-disable-output", "-"], input=t,
                           capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stderr[:2000]


def test_generated_programs_use_what_they_should():
    text = "\n".join(generate_program(s, SIZE) for s in range(20))
    for needle in ("phi i8 addrspace(1)*", "phi i64 addrspace(1)*", "select i1", "@gc_collect()",
                   "@do_safepoint()", "@print_i64(", "getelementptr i8 addrspace(1)*, i8 addrspace(1)* addrspace(1)*"):
        assert needle in text, needle
    assert "ptrtoint" not in text  # checksums never see an address


# ---------------------------------------------------------------- a broken lowering is caught


def drop_last_pair(loaded):
    """gctoy's lowering with a relocation skipped: every stack map record loses its last
    (base, derived) pair, so the collector never rewrites that slot."""
    sm = loaded.stackmap
    # locations: calling convention, flags, deopt count (3 constants), then (base, derived) pairs
    records = tuple(replace(r, locations=r.locations[:-2]) if len(r.locations) >= 5 else r for r in sm.records)
    assert records != sm.records
    return replace(loaded, stackmap=replace(sm, records=records))


@pytest.mark.parametrize("regalloc", [False, True], ids=["slots", "registers"])
def test_a_skipped_relocation_is_caught_by_the_differential(lli, regalloc):
    seeds = list(range(500, 508))
    programs = [generate_program(s, SIZE) for s in seeds]
    oracle = run_lli_batch(programs, lli)
    combined = combine_programs(programs, prefixes(len(programs)))
    healthy = gctoy_compile(combined, regalloc)
    broken = drop_last_pair(healthy)
    assert [o.output for o in run_entries(healthy, len(programs), verify=False)] == oracle
    caught = []
    for k, want in enumerate(oracle):
        # no heap verifier: only the differential itself (wrong output, or a crash) may notice
        runtime = Runtime(broken, stress=True, verify=False, semispace_size=SEMISPACE)
        try:
            result = runtime.run(entry=f"p{k}_main").result
            got = (runtime.printed, result)
        except Exception as e:  # noqa: BLE001 - a crash counts as caught
            caught.append((seeds[k], type(e).__name__))
            continue
        if got != want:
            caught.append((seeds[k], "wrong output"))
    assert caught, "dropping a relocation from every record went unnoticed"
