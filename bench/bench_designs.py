"""Three ways for a collector to find roots, measured side by side: stack maps, a shadow stack, x86 GC info.

Every program is compiled once per *design* (gctoy.runtime.designs): the first two from the same
RS4GC output by the same x86-64 code generator, the third from the same IR by the x86-32 one; all
run on Unicorn under the same runtime natives, heap and Cheney collector; only the root finding
differs:

* ``statepoint``   gc.statepoint calls, a ``.llvm_stackmaps`` section, frames walked by
                   return address (stackwalk.py);
* ``shadow-stack`` ``statepoints-to-gcroots`` + ``shadow-stack-gc-lowering``: bases spilled to
                   gcroot slots before each call and reloaded after, a StackEntry pushed on
                   ``@llvm_gc_root_chain`` at entry and popped at exit, FrameMaps in the data.

Measured (instructions are Unicorn's count of executed guest instructions):

1. per-call cost with ``k`` GC pointers (k = 0, 1, 2, 4, 8): (a) a caller keeps k pointers
   live across a loop of calls to a pointer-free function; (b) the same loop, but the callee
   takes the k pointers as arguments and keeps them live across one call of its own, so it
   has k roots (shadow stack: a StackEntry push and pop, k null-initialisations, k spills and
   k reloads per call); (b) - (a) is the callee's share. Per-call figures are
   (I(2N) - I(N)) / N, so set-up cancels;
2. generated programs (``tests/runnable_gen.py``): instructions executed, code bytes, GC
   metadata bytes (stack map section vs FrameMaps + root-chain head; plus the StackEntry
   words each activation puts on the machine stack), and with a collection at every runtime
   call the host time per collection, split into finding the roots and the rest, and the
   objects copied per collection (a shadow-stack root keeps its last base until the next
   call overwrites it, so it can keep an object alive a little longer than a stack map does).

* ``x86-gcinfo``   the abstract-machine IR as written (no RS4GC), lowered to 32-bit x86 with
                   CoreCLR's JIT32 conventions; a GC-info blob per method (tracked lifetimes,
                   interior pointers) in a ``.gcinfo_x86`` section, frames walked by return
                   address and unwound by EBP chain or ESP tracking (stackwalk32.py).

The third design runs a different instruction set: its counts include doing 64-bit arithmetic
with 32-bit registers, so its totals say more about x86-32 than about GC info; the *slopes* (the
instructions each extra GC pointer adds per call) and the metadata bytes are the comparable
figures. The designs are rows of one list (``DESIGNS``). Prints tables and ratios to the first
design; exits 0.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "tests")]

from gctoy.runtime.designs import (  # noqa: E402
    DESIGNS, ROOT_COUNTS, Built, callee_loop, caller_loop, make_runtime, per_call, slope,
)
from gctoy.runtime.run import Runtime  # noqa: E402
from runnable_gen import generate_program  # noqa: E402


# ---------------------------------------------------------------- generated programs


class TimedRoots:
    """A root finder that times another one."""

    def __init__(self, inner) -> None:
        self.inner = inner
        self.design = getattr(inner, "design", "x86-gcinfo")
        self.seconds = 0.0

    def may_collect(self, machine) -> bool:
        """As the inner finder says."""
        return self.inner.may_collect(machine)

    def find(self, machine):
        """The inner finder's roots, timed."""
        t0 = time.perf_counter()
        try:
            return self.inner.find(machine)
        finally:
            self.seconds += time.perf_counter() - t0

    def all_slots(self, machine):
        """As the inner finder says."""
        return self.inner.all_slots(machine)


def stressed(built: Built) -> tuple[int, float, float, int, tuple]:
    """(collections, seconds collecting, seconds finding roots, objects copied, output), collecting at
    every runtime call."""
    if built.target == "x86-32":
        from gctoy.runtime.stackwalk32 import GCInfoRoots

        roots = TimedRoots(GCInfoRoots())
    else:
        roots = TimedRoots(Runtime(built.loaded).roots)
    runtime = make_runtime(built, stress=True, roots=roots)
    spent = 0.0
    original = runtime.collect

    def timed_collect():
        nonlocal spent
        t0 = time.perf_counter()
        try:
            return original()
        finally:
            spent += time.perf_counter() - t0

    runtime.collect = timed_collect  # type: ignore[method-assign]
    result = runtime.run(max_instructions=None)
    return (len(runtime.collections), spent, roots.seconds, runtime.stats.gc.objects_copied,
            (tuple(runtime.printed), result.result))


def ratio(value: float, base: float) -> str:
    """``value / base`` as ``1.23x``."""
    return f"{value / base:6.2f}x" if base else "     -"


def main(argv: list[str]) -> int:
    """Run the measurements and print the tables."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=500, help="N of the call loops")
    ap.add_argument("--seeds", type=int, nargs="*", default=[11, 12, 13, 14, 15], help="generated programs")
    ap.add_argument("--size", type=int, default=16, help="phases of each generated program")
    args = ap.parse_args(argv)
    names = [d.name for d in DESIGNS]
    head = "".join(f"{n:>14}" for n in names) + "".join(f"{n + '/' + names[0]:>26}" for n in names[1:])

    for title, program in (("caller keeps k pointers live across each call", caller_loop),
                           ("and the callee holds them across one call (k roots)", callee_loop)):
        print(f"Instructions per call, {title}; (I(2N) - I(N)) / N, N = {args.calls}")
        print(f"  {'k':>3}{head}")
        series: dict[str, list[tuple[int, float]]] = {n: [] for n in names}
        for k in ROOT_COUNTS:
            row = [per_call(d, program, args.calls, k) for d in DESIGNS]
            for d, v in zip(DESIGNS, row):
                series[d.name].append((k, v))
            ratios = "".join(f"{ratio(v, row[0]):>26}" for v in row[1:])
            print(f"  {k:>3}" + "".join(f"{v:14.2f}" for v in row) + ratios)
        print("  the first GC pointer (0 -> 1) / each further one (least-squares slope over k >= 1): " +
              ", ".join(f"{n} {series[n][1][1] - series[n][0][1]:+.2f} / {slope(series[n][1:]):+.2f}"
                        for n in names) + " instructions per call\n")

    print(f"Generated programs (runnable_gen, size {args.size}): static costs and a run without collections")
    print(f"  {'seed':>5} {'design':<14}{'instructions':>14}{'code bytes':>12}{'GC metadata':>13}"
          f"{'StackEntry B':>14}")
    totals = {n: [0, 0, 0, 0] for n in names}
    builds: dict[tuple[int, str], Built] = {}
    for seed in args.seeds:
        text = generate_program(seed, args.size)
        outputs = set()
        for d in DESIGNS:
            built = builds[(seed, d.name)] = d.build(text)
            runtime = make_runtime(built, gc="none", semispace_size=1 << 22)
            result = runtime.run(max_instructions=None)
            outputs.add((tuple(runtime.printed), result.result))
            row = (runtime.machine.instructions, built.code_bytes, built.metadata_bytes, built.frame_bytes)
            totals[d.name] = [t + v for t, v in zip(totals[d.name], row)]
            print(f"  {seed:>5} {d.name:<14}" + "".join(f"{v:>{w}}" for v, w in zip(row, (14, 12, 13, 14))))
        assert len(outputs) == 1, f"seed {seed}: the designs disagree"
    base = totals[names[0]]
    for n in names:
        t = totals[n]
        print(f"  {'total':>5} {n:<14}{t[0]:>14}{t[1]:>12}{t[2]:>13}{t[3]:>14}   ratios to {names[0]}: "
              f"instructions {ratio(t[0], base[0]).strip()}, code {ratio(t[1], base[1]).strip()}, "
              f"metadata {ratio(t[2], base[2]).strip()}")

    print("\nA collection at every runtime call (host time, best of 3 runs per program; the same collector, "
          "different roots)")
    print(f"  {'design':<14}{'collections':>12}{'us/collection':>15}{'us finding roots':>18}{'roots share':>13}"
          f"{'copied/collection':>19}")
    per = {}
    for d in DESIGNS:
        n = spent = finding = copied = 0
        outs = []
        for seed in args.seeds:
            runs = [stressed(builds[(seed, d.name)]) for _ in range(3)]
            c, s, f, objects, out = min(runs, key=lambda r: r[1])
            n, spent, finding, copied = n + c, spent + s, finding + f, copied + objects
            outs.append(out)
        per[d.name] = (spent / n, finding / n, outs)
        print(f"  {d.name:<14}{n:>12}{1e6 * spent / n:>15.1f}{1e6 * finding / n:>18.1f}{finding / spent:>12.0%}{copied / n:>19.1f}")
    assert len({tuple(v[2]) for v in per.values()}) == 1, "stressed runs disagree"
    for n in names[1:]:
        print(f"  {n}/{names[0]}: {ratio(per[n][0], per[names[0]][0]).strip()} per collection, "
              f"{ratio(per[n][1], per[names[0]][1]).strip()} finding roots")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
