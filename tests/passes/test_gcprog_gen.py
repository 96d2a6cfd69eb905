"""The generator of GC programs (tests/gcprog_gen.py): deterministic, varied, and valid for LLVM 14."""
from __future__ import annotations

import random
import re
import subprocess

import pytest

from gcprog_gen import generate, generate_function, module_of
from rs4gc_oracle import facts_by_call, run_rs4gc

SEEDS = range(1, 201)


def ci_size(seed: int) -> int:
    """The size mix the differential test uses."""
    return random.Random(seed).choice((6, 10, 16, 24, 32, 48, 64, 96))


@pytest.fixture(scope="module")
def sample() -> list[str]:
    return [generate_function(s, ci_size(s)) for s in SEEDS]


def instructions(fn_text: str) -> int:
    return sum(1 for line in fn_text.splitlines() if line.startswith("  ") and not line.startswith("  ;"))


def test_same_seed_same_text_and_seeds_differ():
    assert generate(7, 80) == generate(7, 80)
    assert generate(7, 80) != generate(8, 80)
    assert generate_function(7, 80, "f") == generate_function(7, 80, "f")


@pytest.mark.parametrize("size", [40, 400, 2000])
def test_size_is_roughly_the_number_of_instructions(size):
    n = instructions(generate_function(3, size))
    assert 0.8 * size <= n <= 1.3 * size + 20


def test_names_have_no_dots(sample):
    # RS4GC's names (.relocated, .base, .remat, .0) must never clash with the input's
    for fn in sample:
        assert not re.search(r"%[A-Za-z_0-9]*\.", fn.split("{", 1)[1])


def test_the_sample_covers_what_rs4gc_cares_about(sample):
    text = "\n".join(sample)
    features = {
        "allocation": r"call i8 addrspace\(1\)\* @gc_alloc",
        "void call": r"call void @foo\(\)",
        "call with a GC argument": r"call void @bar\(i8 addrspace\(1\)\* %",
        "call returning a GC pointer": r"= call %obj addrspace\(1\)\* @make_obj",
        "gc-leaf call": r"call i64 @hash",
        "deopt bundle": r'\[ "deopt"\(i32 \d+, ',
        "invoke": r"= invoke |  invoke void",
        "landing pad": r"landingpad token cleanup",
        "loop counter phi": r"phi i64 \[ 0, ",
        "phi of GC pointers": r"phi i8 addrspace\(1\)\* \[",
        "phi of object pointers": r"phi %obj addrspace\(1\)\* \[",
        "phi of field addresses": r"phi \S+ addrspace\(1\)\* addrspace\(1\)\* \[",
        "select of GC pointers": r"select i1 %\w+, \S+ addrspace\(1\)\*",
        "icmp on pointers": r"icmp \w+ \S+ addrspace\(1\)\*",
        "icmp against null": r"icmp \w+ .*, null",
        "bitcast between GC types": r"bitcast \S+ addrspace\(1\)\* %\w+ to ",
        "GEP, constant index": r"getelementptr i8, i8 addrspace\(1\)\* %\w+, i64 \d+",
        "GEP, variable index": r"getelementptr i64, i64 addrspace\(1\)\* %\w+, i64 %",
        "GEP, struct field": r"getelementptr %obj, %obj addrspace\(1\)\* %\w+, i64 0, i32 [124]",
        "GEP, array in struct": r"i64 0, i32 3, i64 %",
        "load of a GC pointer": r"load i8 addrspace\(1\)\*, i8 addrspace\(1\)\* addrspace\(1\)\*",
        "store of a GC pointer": r"store %obj addrspace\(1\)\* %\w+, %obj addrspace\(1\)\* addrspace\(1\)\*",
        "ret of a GC pointer": r"ret i8 addrspace\(1\)\* %",
        "ret void": r"ret void",
    }
    missing = [name for name, pat in features.items() if not re.search(pat, text)]
    assert not missing, f"no generated function has: {missing}"
    # structural shapes, per function
    shared_pads = sum(1 for fn in sample if any(
        len(re.findall(rf"unwind label %{lbl}\b", fn)) == 2 for lbl in set(re.findall(r"unwind label %(\w+)", fn))))
    lcssa = sum(1 for fn in sample if re.search(r"= phi [^\[]+\[ %\w+, %\w+ \]$", fn, re.M))
    three_var = 0
    long_const = 0
    for fn in sample:
        var_run = const_run = 0
        prev = None
        for m in re.finditer(r"%(\w+) = getelementptr (?:i8|i64), \S+ addrspace\(1\)\* %(\w+), i64 (%?\w+)", fn):
            name, base, idx = m.groups()
            chained = base == prev
            var_run = (var_run if chained else 0) + idx.startswith("%")
            const_run = (const_run + 1 if chained else 1)
            three_var += var_run == 3
            long_const += const_run == 11
            prev = name
    assert shared_pads >= 3, "two invokes sharing a landing pad"
    assert lcssa >= 3, "single-entry phis after loops"
    assert three_var >= 3, "GEP chains with three variable indices"
    assert long_const >= 3, "GEP chains longer than ten"


def test_200_seeds_pass_the_llvm14_verifier(llvm14, sample):
    r = subprocess.run([str(llvm14.opt), "-passes=verify", "-disable-output"], input=module_of(sample),
                       capture_output=True, text=True)
    if r.returncode != 0:
        bad = []
        for seed, fn in zip(SEEDS, sample):
            one = subprocess.run([str(llvm14.opt), "-passes=verify", "-disable-output"], input=module_of([fn]),
                                 capture_output=True, text=True)
            if one.returncode != 0:
                bad.append(f"seed {seed} size {ci_size(seed)}:\n{one.stderr}")
        pytest.fail("generated functions rejected by opt:\n" + "\n".join(bad[:3]), pytrace=False)


def test_llvm14_rs4gc_on_the_sample_is_safe_and_nontrivial(llvm14, sample):
    """LLVM's own output passes verify<safepoint-ir>, and the oracle finds the interesting cases in it."""
    src = module_of(sample)
    out = run_rs4gc(llvm14.opt, src)
    r = subprocess.run([str(llvm14.opt), "-passes=verify<safepoint-ir>", "-disable-output"], input=out,
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[:3000]
    facts = facts_by_call(out, src)
    pairs = [f.pairs for f in facts.values()]
    assert len(facts) > 1000
    assert sum(1 for p in pairs if len(p) >= 4) > len(pairs) // 4, "live sets should not be trivial"
    assert any(b.startswith("base-of(") for p in pairs for b, _ in p), "inserted base phis/selects"
    assert any(b != d and not b.startswith("base-of(") for p in pairs for b, d in p), "relocated derived pointers"
    assert sum(1 for f in facts.values() if f.remat) > 100, "rematerialized derived pointers"
    for pattern in (r"%\.\d+ = phi ", r"\.relocated\.casted = bitcast", r"\.split-lp:", r"\.remat1 = "):
        assert re.search(pattern, out), pattern


def test_larger_functions_pass_the_llvm14_verifier(llvm14):
    fns = [generate_function(seed, 800) for seed in range(500, 510)]
    r = subprocess.run([str(llvm14.opt), "-passes=verify", "-disable-output"], input=module_of(fns),
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[:3000]
