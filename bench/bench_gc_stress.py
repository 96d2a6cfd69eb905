"""The moving collector under stress, and what a statepoint costs per call.

1. GC stress: a generated program (``tests/runnable_gen.py``, fixed seed) is compiled once by
   gctoy's pipeline (gctoy's RS4GC and x86-64 lowering) and, if LLVM 14 is installed, once by
   ``opt``/``llc -O2``; its ``@main`` is then run again and again on one runtime in stress mode
   (a collection at every statepoint) until at least 10,000 collections have happened. Every
   repetition must print and return the same as the first. Target: those runs take <= 10 s.
2. Instructions per call, counted by the machine's instruction counter (Unicorn): a loop of N
   calls of a leaf function, once as a plain call (``"gc-leaf-function"``: RS4GC leaves it
   alone) and once through a statepoint, with K GC pointers live across the call
   (K = 0, 1, 4). The per-call figures are differences between N and 2N iterations, so the
   set-up cost cancels; the statepoint overhead is the difference between the two. Four
   lowerings in the same run: gctoy's default (the register allocator, every gc-live value
   spilled at the statepoint as llc 14 does by default), gctoy with ``--gc-registers 5`` (GC
   pointers in callee-saved registers, llc's ``-max-registers-for-gc-values``), gctoy's slot
   lowering (``--no-regalloc``, a stack slot per value) and ``llc -O2``. Targets for the
   default: a plain call <= 2x llc's instructions, and a live pointer's cost (the statepoint
   overhead per pointer, from K = 0 to K = 4) <= llc's + 1.

Prints the numbers and PASS/FAIL against the targets; always exits 0 (a report, not a gate).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "tests")]

from gctoy.ir import parse_module  # noqa: E402
from gctoy.passes import run as run_pass  # noqa: E402
from gctoy.runtime.elfload import load_object  # noqa: E402
from gctoy.runtime.run import Runtime, load_compiled  # noqa: E402
from gctoy.llvm_tools import find_llvm  # noqa: E402
from runnable_gen import generate_program  # noqa: E402

TARGET_COLLECTIONS = 10_000
TARGET_SECONDS = 10.0
P = "i8 addrspace(1)*"
I64P = "i64 addrspace(1)*"


def ours(text: str, regalloc: bool = True, gc_registers: int = 0):
    module = parse_module(text)
    run_pass(module, "rewrite-statepoints-for-gc")
    return load_compiled(module, regalloc, gc_registers)


def ours_gc_registers(text: str):
    return ours(text, gc_registers=5)


def ours_slots(text: str):
    return ours(text, regalloc=False)


def theirs(text: str, llvm):
    with tempfile.TemporaryDirectory() as tmp:
        src, rw, obj = Path(tmp, "p.ll"), Path(tmp, "p.rs4gc.ll"), Path(tmp, "p.o")
        src.write_text(text)
        subprocess.run([str(llvm.opt), "-passes=rewrite-statepoints-for-gc", "-S", str(src), "-o", str(rw)],
                       check=True, capture_output=True)
        subprocess.run([str(llvm.llc), "-O2", "-filetype=obj", str(rw), "-o", str(obj)], check=True,
                       capture_output=True)
        return load_object(obj.read_bytes())


def stress(label: str, loaded) -> tuple[int, float, bool]:
    """Run @main repeatedly under stress until TARGET_COLLECTIONS; (collections, seconds, consistent)."""
    runtime = Runtime(loaded, stress=True, verify=False)
    first = None
    consistent = True
    runs = 0
    t0 = time.perf_counter()
    while len(runtime.collections) < TARGET_COLLECTIONS:
        before = len(runtime.printed)
        result = runtime.run().result
        got = (runtime.printed[before:], result)
        first = first or got
        consistent &= got == first
        runs += 1
    elapsed = time.perf_counter() - t0
    n = len(runtime.collections)
    g = runtime.stats.gc
    verdict = "PASS" if n >= TARGET_COLLECTIONS and elapsed <= TARGET_SECONDS and consistent else "FAIL"
    print(f"  {label:<22} {runs:4d} runs of @main, {n} collections in {elapsed:6.2f} s "
          f"({n / elapsed:7.0f} collections/s; {g.objects_copied} objects copied, {g.slots_moved} slots rewritten; "
          f"{runtime.machine.instructions} instructions)  output stable: {consistent}  "
          f"[target >= {TARGET_COLLECTIONS} in <= {TARGET_SECONDS:.0f} s: {verdict}]")
    return n, elapsed, consistent


def call_loop(n: int, live: int, statepoint: bool) -> str:
    """@main: n calls of @leaf, with ``live`` GC pointers used after the loop (so live across each call)."""
    attr = ' "gc-leaf-function"' if not statepoint else ""
    lines = [f"declare {P} @gc_alloc(i64, i64)", "declare void @print_i64(i64)", "",
             "define i64 @leaf(i64 %x) {", "entry:", "  %y = add i64 %x, 1", "  ret i64 %y", "}", "",
             'define i64 @main() gc "statepoint-example" {', "entry:"]
    for j in range(live):
        lines.append(f"  %o{j} = call {P} @gc_alloc(i64 1, i64 0)")
    lines += ["  br label %loop", "loop:",
              "  %i = phi i64 [0, %entry], [%i1, %loop]",
              "  %acc = phi i64 [0, %entry], [%acc1, %loop]",
              f"  %r = call i64 @leaf(i64 %i){attr}",
              "  %acc1 = add i64 %acc, %r",
              "  %i1 = add i64 %i, 1",
              f"  %more = icmp slt i64 %i1, {n}",
              "  br i1 %more, label %loop, label %out", "out:"]
    acc = "%acc1"
    for j in range(live):
        lines += [f"  %f{j} = bitcast {P} %o{j} to {I64P}", f"  %v{j} = load i64, {I64P} %f{j}",
                  f"  %s{j} = add i64 {acc}, %v{j}"]
        acc = f"%s{j}"
    lines += [f"  ret i64 {acc}", "}", ""]
    return "\n".join(lines)


def instructions(loaded) -> int:
    runtime = Runtime(loaded, stress=False)
    runtime.run()
    assert not runtime.collections
    return runtime.machine.instructions


def per_call(compile_fn, live: int, statepoint: bool, n: int) -> float:
    a = instructions(compile_fn(call_loop(n, live, statepoint)))
    b = instructions(compile_fn(call_loop(2 * n, live, statepoint)))
    return (b - a) / n


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--size", type=int, default=40, help="phases in the generated program")
    ap.add_argument("--calls", type=int, default=1000, help="N of the call loops")
    args = ap.parse_args(argv)
    llvm, why = find_llvm(14)

    program = generate_program(args.seed, args.size)
    print(f"GC stress: generate_program({args.seed}, {args.size}), a collection at every statepoint")
    t0 = time.perf_counter()
    loaded = ours(program)
    print(f"  gctoy compile (RS4GC + lowering + assembly): {time.perf_counter() - t0:.2f} s")
    stress("gctoy pipeline", loaded)
    if llvm is not None:
        stress("opt + llc -O2 object", theirs(program, llvm))
    else:
        print(f"  llc object: skipped ({why})")

    print(f"\nInstructions per call (Unicorn's count, (I(2N) - I(N)) / N with N = {args.calls})")
    pipelines = [("gctoy (default)", ours), ("gctoy --gc-registers 5", ours_gc_registers),
                 ("gctoy --no-regalloc", ours_slots)]
    if llvm is not None:
        pipelines.append(("llc -O2", lambda text: theirs(text, llvm)))
    summary: dict[str, tuple[float, float]] = {}
    for name, fn in pipelines:
        overheads = {}
        for live in (0, 1, 4):
            plain = per_call(fn, live, False, args.calls)
            sp = per_call(fn, live, True, args.calls)
            overheads[live] = sp - plain
            if live == 0:
                plain0 = plain
            print(f"  {name:<22} {live} live GC pointer(s): plain call {plain:6.2f}, through a statepoint "
                  f"{sp:6.2f}, statepoint overhead {sp - plain:+6.2f} instructions per call")
        summary[name] = (plain0, (overheads[4] - overheads[0]) / 4)
    print("\nPer call and per live pointer (the pointer's cost: statepoint overhead from K = 0 to K = 4, / 4)")
    for name, (plain, pointer) in summary.items():
        print(f"  {name:<22} plain call {plain:6.2f}, per live pointer {pointer:+6.2f}")
    if "llc -O2" in summary:
        llc_plain, llc_pointer = summary["llc -O2"]
        plain, pointer = summary["gctoy (default)"]
        ok_call = plain <= 2 * llc_plain
        ok_pointer = pointer <= llc_pointer + 1
        print(f"  gctoy (default) vs llc -O2: plain call {plain / llc_plain:.2f}x [target <= 2x: "
              f"{'PASS' if ok_call else 'FAIL'}], per pointer {pointer - llc_pointer:+.2f} [target <= +1: "
              f"{'PASS' if ok_pointer else 'FAIL'}]")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
