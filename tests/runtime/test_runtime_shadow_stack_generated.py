"""The generated programs of ``tests/runnable_gen.py`` on the shadow stack, against stack maps and lli.

Each program runs through two pipelines that share RS4GC's analysis and differ in how the
collector finds the roots:

* statepoint design: ``rewrite-statepoints-for-gc``, gctoy's x86-64 lowering with a stack map;
* shadow-stack design: the same RS4GC output through ``statepoints-to-gcroots`` and
  ``shadow-stack-gc-lowering``, the same code generator, roots found on ``@llvm_gc_root_chain``.

Both collect at *every* runtime call (stress), verify the heap and poison from-space after
each collection. Every ``@print_i64`` line and ``@main``'s result of the shadow stack must be
what LLVM's ``lli`` prints running the plain IR (``GCTOY_RUN_COUNT`` programs, default 100, in
batches of 25 sharing one module and one runtime, as in test_runtime_differential, which
checks the statepoint design the same way); a few programs run under both designs side by
side, and once through LLVM's own shadow-stack lowering and code generator.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent)]

from gctoy.ir import instructions as I  # noqa: E402
from gctoy.ir import parse_module  # noqa: E402
from gctoy.ir.intrinsics import is_relocate_name  # noqa: E402
from gctoy.ir.statepoint import GCRelocate, Statepoint, token_statepoint  # noqa: E402
from gctoy.passes import run as run_pass  # noqa: E402
from gctoy.runtime.elfload import load_object  # noqa: E402
from gctoy.runtime.run import Runtime, load_compiled  # noqa: E402
from gctoy.runtime.shadowstack import ShadowStackRoots, elf_data_symbols, lower_for_shadow_stack  # noqa: E402
from lli_shim import run_lli_batch  # noqa: E402
from runnable_gen import combine_programs, generate_program  # noqa: E402
from shadow_stack_llvm import llvm_shadow_stack_object  # noqa: E402

COUNT = int(os.environ.get("GCTOY_RUN_COUNT", "100"))
BATCH = 25
SEMISPACE = 1 << 20
FIRST_SEED = 3000
SEEDS = list(range(FIRST_SEED, FIRST_SEED + COUNT))
BATCHES = [SEEDS[i:i + BATCH] for i in range(0, len(SEEDS), BATCH)]


def size_of(seed: int) -> int:
    """Programs of 4 to 20 phases."""
    return 4 + seed % 17


@dataclass(frozen=True)
class Outcome:
    printed: tuple[int, ...]
    result: int
    collections: int
    instructions: int

    @property
    def output(self) -> tuple[list[int], int]:
        return list(self.printed), self.result


def batch_text(seeds: list[int]) -> str:
    return combine_programs([generate_program(s, size_of(s)) for s in seeds], [f"p{k}_" for k in range(len(seeds))])


def rs4gc(text: str):
    module = parse_module(text)
    run_pass(module, "rewrite-statepoints-for-gc")
    return module


def run_entries(runtime: Runtime, count: int) -> list[Outcome]:
    """Run ``@p0_main`` ... in turn on one runtime."""
    out = []
    for k in range(count):
        printed, collections, insns = len(runtime.printed), len(runtime.collections), runtime.machine.instructions
        result = runtime.run(entry=f"p{k}_main")
        out.append(Outcome(tuple(runtime.printed[printed:]), result.result,
                           len(runtime.collections) - collections, runtime.machine.instructions - insns))
    return out


def both_designs(text: str, count: int, verify: bool = True) -> tuple[list[Outcome], list[Outcome]]:
    statepoint = Runtime(load_compiled(rs4gc(text)), stress=True, verify=verify, semispace_size=SEMISPACE)
    shadow = Runtime(load_compiled(lower_for_shadow_stack(rs4gc(text))), stress=True, verify=verify,
                     semispace_size=SEMISPACE)
    assert statepoint.roots.design == "statepoint" and shadow.roots.design == "shadow-stack"
    return run_entries(statepoint, count), run_entries(shadow, count)


@pytest.fixture(scope="module")
def lli(llvm14, lli14):
    """LLVM 14's lli (the other LLVM 14 tools are needed too)."""
    return lli14


@pytest.mark.parametrize("seeds", BATCHES, ids=lambda s: f"seeds{s[0]}-{s[-1]}")
def test_shadow_stack_prints_what_lli_prints(seeds, lli):
    oracle = run_lli_batch([generate_program(s, size_of(s)) for s in seeds], lli)
    runtime = Runtime(load_compiled(lower_for_shadow_stack(rs4gc(batch_text(seeds)))), stress=True, verify=True,
                      semispace_size=SEMISPACE)
    assert runtime.roots.design == "shadow-stack"
    problems = []
    for seed, want, got in zip(seeds, oracle, run_entries(runtime, len(seeds))):
        where = f"generate_program({seed}, {size_of(seed)})"
        if got.output != want:
            problems.append(f"{where}: shadow stack {got.output} != lli {want}")
        if got.collections == 0:
            problems.append(f"{where}: no collection")
    assert not problems, "\n".join(problems)


def test_shadow_stack_and_stack_maps_agree_call_for_call():
    """The same programs under both designs: the same output and a collection at the same calls."""
    seeds = SEEDS[:8]
    statepoint, shadow = both_designs(batch_text(seeds), len(seeds))
    for seed, sp, ss in zip(seeds, statepoint, shadow):
        assert ss.output == sp.output, seed
        assert ss.collections == sp.collections > 0, seed
        assert ss.instructions != sp.instructions, seed  # the push, pop, spills and reloads cost something


def test_a_full_heap_collects_on_the_shadow_stack_too():
    """No stress: collections only when an allocation does not fit a small semispace."""
    seeds = SEEDS[8:12]
    text = batch_text(seeds)
    outcomes = {}
    for design, module in (("statepoint", rs4gc(text)), ("shadow-stack", lower_for_shadow_stack(rs4gc(text)))):
        runtime = Runtime(load_compiled(module), verify=True, semispace_size=16 << 10)
        outcomes[design] = run_entries(runtime, len(seeds))
    assert [o.output for o in outcomes["statepoint"]] == [o.output for o in outcomes["shadow-stack"]]
    assert sum(o.collections for o in outcomes["shadow-stack"]) > 0


@settings(max_examples=6, deadline=None)
@given(seed=st.integers(0, 100_000), size=st.integers(1, 12))
def test_collecting_at_every_call_changes_nothing(seed, size):
    """The law of a correct root finder: a collection at every call prints what no collection prints."""
    loaded = load_compiled(lower_for_shadow_stack(rs4gc(generate_program(seed, size))))
    calm = Runtime(loaded, gc="none").run()
    stressed = Runtime(loaded, stress=True, verify=True, semispace_size=SEMISPACE).run()
    assert (stressed.printed, stressed.result) == (calm.printed, calm.result)
    assert stressed.stats.collections == stressed.stats.runtime_calls > 0


def test_llvm_lowering_of_the_gcroot_form_runs_under_the_shadow_stack_runtime(llvm14, lli, tmp_path):
    """statepoints-to-gcroots output, lowered and compiled by LLVM 14 (llc -O2), on gctoy's runtime."""
    seeds = SEEDS[:10]
    oracle = run_lli_batch([generate_program(s, size_of(s)) for s in seeds], lli)
    module = rs4gc(batch_text(seeds))
    run_pass(module, "statepoints-to-gcroots")
    obj = llvm_shadow_stack_object(str(module), llvm14, tmp_path)
    loaded = load_object(obj)
    runtime = Runtime(loaded, stress=True, verify=True, semispace_size=SEMISPACE,
                      roots=ShadowStackRoots.for_symbols(elf_data_symbols(obj, loaded)))
    outcomes = run_entries(runtime, len(seeds))
    assert [o.output for o in outcomes] == oracle
    assert all(o.collections > 0 for o in outcomes)


def forget_one_pointer(module) -> int:
    """A frontend bug: in each function, the first relocation is replaced by the value before the
    call (the pointer is neither rooted for that call nor reloaded after it). Returns how many."""
    dropped = 0
    for fn in module.definitions():
        for inst in fn.instructions():
            if isinstance(inst, I.Call) and is_relocate_name(inst.callee_name):
                derived = GCRelocate(inst, Statepoint.of(token_statepoint(inst.args[0]))).derived
                fn.replace_all_uses(inst, derived)
                inst.erase()
                dropped += 1
                break
    return dropped


def test_a_forgotten_root_is_caught(lli):
    seeds = SEEDS[:12]
    oracle = run_lli_batch([generate_program(s, size_of(s)) for s in seeds], lli)
    healthy = Runtime(load_compiled(lower_for_shadow_stack(rs4gc(batch_text(seeds)))), stress=True, verify=True,
                      semispace_size=SEMISPACE)
    assert [o.output for o in run_entries(healthy, len(seeds))] == oracle  # unmutated, the same runs are right
    module = rs4gc(batch_text(seeds))
    assert forget_one_pointer(module) > 0
    lower_for_shadow_stack(module)
    loaded = load_compiled(module)
    caught = []
    for k, want in enumerate(oracle):
        runtime = Runtime(loaded, stress=True, verify=True, semispace_size=SEMISPACE)
        try:
            result = runtime.run(entry=f"p{k}_main")
        except Exception as e:  # noqa: BLE001 - the verifier, or a read through a poisoned pointer
            caught.append((seeds[k], type(e).__name__))
            continue
        if (runtime.printed, result.result) != want:
            caught.append((seeds[k], "wrong output"))
    assert len(caught) >= len(seeds) // 2, caught
