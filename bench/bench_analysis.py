"""How fast the IR analyses are on big functions, next to one plain walk over the same function.

``tests/big_cfg.py`` generates functions of 250, 500 and 1000 blocks (about 5k, 10k and 21k
instructions: GC pointer phis, GEPs, adds, calls, random backedges). Each is timed, best of
``--repeat`` runs, all in this one run:

* the reference: one walk over every instruction and operand of the function (the least any
  whole-function analysis must do);
* ``Liveness(fn, gc_only=True)`` with ``live_across`` of every call, and ``Liveness(fn)``;
* ``DominatorTree(fn)`` and ``LoopInfo(fn, dt)``.

It prints the times, each as a multiple of the reference, and the growth per doubling, and checks
the targets: at the largest size liveness (both kinds, with the live-across sets) at most
``TARGET_LIVENESS`` times the reference and dominators + loops at most ``TARGET_LOOPS`` times
(100x is about 5 s at 21k instructions where the walk takes 0.05 s). Time grows faster than the
input here because the answers do: the live-across sets and the loop bodies overlap more as the
function grows (their total size is quadratic in it).
It always exits 0: it is a report, not a gate. (tests/ir/analysis/test_liveness_scale.py checks
the growth of the work in operation counts.)
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "tests")]

from big_cfg import big_function  # noqa: E402
from gctoy.ir import instructions as I  # noqa: E402
from gctoy.ir.analysis import DominatorTree, Liveness, LoopInfo  # noqa: E402

SIZES = (250, 500, 1000)
TARGET_LIVENESS = 100.0
TARGET_LOOPS = 100.0


def best_of(repeat: int, fn) -> float:
    """The smallest wall time of ``repeat`` calls of ``fn`` (seconds)."""
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def walk(fn) -> int:
    """The reference: touch every operand of every instruction once."""
    n = 0
    for block in fn.blocks:
        for inst in block.instructions:
            for op in inst.operands:
                n += op is not None
    return n


def measure(blocks: int, repeat: int) -> tuple[int, dict[str, float]]:
    """(instructions, seconds per column) for the function of ``blocks`` blocks."""
    fn = big_function(blocks=blocks)
    calls = [i for i in fn.instructions() if isinstance(i, I.Call)]

    def liveness():
        lv = Liveness(fn, gc_only=True)
        for call in calls:
            lv.live_across(call)
        Liveness(fn)

    def loops():
        LoopInfo(fn, DominatorTree(fn))

    row = {
        "walk (reference)": best_of(repeat, lambda: walk(fn)),
        "liveness": best_of(repeat, liveness),
        "dominators+loops": best_of(repeat, loops),
    }
    return sum(len(b.instructions) for b in fn.blocks), row


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=lambda s: tuple(int(x) for x in s.split(",")), default=SIZES,
                    help="comma-separated block counts (default 250,500,1000)")
    ap.add_argument("--repeat", type=int, default=3, help="runs per measurement, the best is kept")
    args = ap.parse_args(argv)

    results = {n: measure(n, args.repeat) for n in args.sizes}
    columns = list(next(iter(results.values()))[1])
    print(f"gctoy IR analyses on big functions (best of {args.repeat}; seconds; python {sys.version.split()[0]})")
    print()
    print(f"{'blocks':>6} {'insts':>7} | " + " | ".join(f"{c:>16}" for c in columns))
    for n, (insts, row) in results.items():
        print(f"{n:>6} {insts:>7} | " + " | ".join(f"{row[c]:>16.4f}" for c in columns))
    print()
    print("multiple of the reference walk")
    for n, (insts, row) in results.items():
        base = row["walk (reference)"]
        print(f"{n:>6} {insts:>7} | " + " | ".join(f"{c}: {row[c] / base:7.1f}x" for c in columns[1:]))
    print()
    print("growth factor per doubling of the function")
    ordered = sorted(args.sizes)
    for small, big in zip(ordered, ordered[1:]):
        parts = [f"{c}: {results[big][1][c] / results[small][1][c]:4.2f}" for c in columns]
        print(f"{small:>6} -> {big:>6} | " + " | ".join(parts))
    largest = results[max(args.sizes)][1]
    base = largest["walk (reference)"]
    verdicts = [
        (f"liveness at {max(args.sizes)} blocks is {largest['liveness'] / base:.0f}x the walk "
         f"(target <= {TARGET_LIVENESS:.0f}x)", largest["liveness"] / base <= TARGET_LIVENESS),
        (f"dominators+loops at {max(args.sizes)} blocks is {largest['dominators+loops'] / base:.0f}x the walk "
         f"(target <= {TARGET_LOOPS:.0f}x)", largest["dominators+loops"] / base <= TARGET_LOOPS),
    ]
    print()
    for text, ok in verdicts:
        print(f"{'PASS' if ok else 'FAIL'}  {text}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
