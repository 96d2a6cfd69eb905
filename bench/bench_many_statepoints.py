"""``gctoy llc`` and ``gctoy run`` on one function with N statepoints, next to ``llc -O2`` on the same input.

The input is generated: ``@main`` allocates an object and then calls ``@leaf`` N times, the object
live across every call, so LLVM 14's RS4GC (``opt-14``, run once, not timed) makes N statepoints
with a ``gc.result`` and a ``gc.relocate`` each. (One live pointer, because the stack map of 10,000
records with two would not fit the image's section area, 0xf0000 bytes, gctoy.emu.image.) N runs 1,250, 2,500, 5,000
and 10,000 (``--sizes``). For each N, in this one run:

* ``llc -O2`` (LLVM 14, through ``gctoy.llvm_tools``) compiles the statepoint IR to assembly;
* ``gctoy llc`` compiles the same file (in process: the command's own entry point);
* ``gctoy run`` compiles and runs it on the emulated machine under the moving collector.

Times are CPU seconds (the process's own for gctoy, the child's for llc), so other work on a busy
machine does not count; each is the least of ``--repeat`` runs (default 3). It prints each time,
gctoy's as a multiple of llc's, the growth from each N to the next, and the growth per doubling of
N fitted over all sizes (least squares on log time against log N: single steps on a shared machine
can jump), and checks the targets: at the largest N gctoy at most ``TARGET_RATIO`` times llc, and
the fitted growth of gctoy's at most ``TARGET_GROWTH`` per doubling (linear work gives 2).
It always exits 0: it is a report, not a gate (tests/codegen/test_statepoint_scale.py checks the
growth of the work in operation counts).
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import io
import math
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "tests")]

from gctoy.cli import main as gctoy_main  # noqa: E402
from gctoy.llvm_tools import find_llvm  # noqa: E402

SIZES = (1250, 2500, 5000, 10000)
TARGET_RATIO = 10.0
TARGET_GROWTH = 2.3
P = "i8 addrspace(1)*"


def program(n: int) -> str:
    """@main: an object live across ``n`` calls of @leaf; returns the last call's value plus the
    object's first word."""
    lines = [f"declare {P} @gc_alloc(i64, i64)", "",
             "define i64 @leaf(i64 %x) {", "entry:", "  %y = add i64 %x, 1", "  ret i64 %y", "}", "",
             'define i64 @main() gc "statepoint-example" {', "entry:",
             f"  %a = call {P} @gc_alloc(i64 1, i64 0)"]
    acc = "0"
    for k in range(n):
        lines.append(f"  %r{k} = call i64 @leaf(i64 {acc})")
        acc = f"%r{k}"
    lines += [f"  %fa = bitcast {P} %a to i64 addrspace(1)*", "  %va = load i64, i64 addrspace(1)* %fa",
              f"  %s = add i64 {acc}, %va", "  ret i64 %s", "}", ""]
    return "\n".join(lines)


def child_cpu() -> float:
    """CPU seconds used so far by finished child processes."""
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def own_cpu(fn) -> tuple[float, str]:
    """(CPU seconds of ``fn()`` in this process, what it printed)."""
    out = io.StringIO()
    gc.collect()
    t0 = time.process_time()
    err = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = fn()
    elapsed = time.process_time() - t0
    if status != 0:
        raise SystemExit(f"gctoy failed: {err.getvalue()[-500:]}")
    return elapsed, out.getvalue()


def measure(n: int, llvm, tmp: Path) -> dict[str, float]:
    """CPU seconds of llc, gctoy llc and gctoy run on the N-statepoint input."""
    src, sp, asm = tmp / f"p{n}.ll", tmp / f"sp{n}.ll", tmp / f"sp{n}.s"
    src.write_text(program(n))
    subprocess.run([str(llvm.opt), "-passes=rewrite-statepoints-for-gc", "-S", str(src), "-o", str(sp)],
                   check=True, capture_output=True)
    t0 = child_cpu()
    subprocess.run([str(llvm.llc), "-O2", str(sp), "-o", str(asm)], check=True, capture_output=True)
    row = {"llc -O2": child_cpu() - t0}
    row["gctoy llc"], _ = own_cpu(lambda: gctoy_main(["llc", str(sp), "-o", str(tmp / f"g{n}.s")]))
    row["gctoy run"], printed = own_cpu(lambda: gctoy_main(["run", "--max-seconds", "0", str(sp)]))
    expected = n  # @leaf adds one per call; a fresh object holds zeros
    if f"result: {expected}" not in printed:
        raise SystemExit(f"gctoy run printed {printed!r}, expected result {expected}")
    return row


def fitted_growth(times: dict[int, float]) -> float:
    """The growth per doubling of N of the least-squares line through (log N, log time)."""
    xs = [math.log2(n) for n in times]
    ys = [math.log2(t) for t in times.values()]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
    return 2.0**slope


def best_of(repeat: int, n: int, llvm, tmp: Path) -> dict[str, float]:
    """The least time of each column over ``repeat`` measurements."""
    rows = [measure(n, llvm, tmp) for _ in range(repeat)]
    return {c: min(r[c] for r in rows) for c in rows[0]}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=lambda s: tuple(int(x) for x in s.split(",")), default=SIZES,
                    help="comma-separated statepoint counts (default 1250,2500,5000,10000)")
    ap.add_argument("--repeat", type=int, default=3, help="measure each size this many times, keep the least")
    args, _ = ap.parse_known_args(argv)
    llvm, why = find_llvm(14)
    if llvm is None:
        print(f"skipped: LLVM 14 is needed for the statepoint input and the reference ({why})")
        return 0
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    with tempfile.TemporaryDirectory() as d:
        results = {n: best_of(max(1, args.repeat), n, llvm, Path(d)) for n in args.sizes}
    columns = ["llc -O2", "gctoy llc", "gctoy run"]
    print(f"one function with N statepoints (CPU seconds, least of {max(1, args.repeat)}; "
          f"python {sys.version.split()[0]})")
    print()
    print(f"{'N':>6} | " + " | ".join(f"{c:>10}" for c in columns) + " | gctoy llc / llc | gctoy run / llc")
    for n, row in results.items():
        print(f"{n:>6} | " + " | ".join(f"{row[c]:>10.2f}" for c in columns)
              + f" | {row['gctoy llc'] / row['llc -O2']:>14.1f}x | {row['gctoy run'] / row['llc -O2']:>14.1f}x")
    print()
    print("growth factor per doubling of N")
    ordered = sorted(args.sizes)
    growths: dict[str, list[float]] = {c: [] for c in columns}
    for small, big in zip(ordered, ordered[1:]):
        for c in columns:
            growths[c].append(results[big][c] / results[small][c])
        print(f"{small:>6} -> {big:>6} | " + " | ".join(f"{c}: {growths[c][-1]:4.2f}" for c in columns))
    largest = results[ordered[-1]]
    print()
    for c in ("gctoy llc", "gctoy run"):
        ratio = largest[c] / largest["llc -O2"]
        ok = ratio <= TARGET_RATIO
        print(f"{'PASS' if ok else 'FAIL'}  {c} on {ordered[-1]} statepoints is {ratio:.1f}x llc -O2 "
              f"(target <= {TARGET_RATIO:.0f}x)")
        if len(ordered) < 2:
            continue
        fit = fitted_growth({n: results[n][c] for n in ordered})
        worst = max(growths[c])
        print(f"{'PASS' if fit <= TARGET_GROWTH else 'FAIL'}  {c} grows {fit:.2f}x per doubling, fitted over "
              f"{ordered[0]}..{ordered[-1]} (target <= {TARGET_GROWTH}; single steps up to {worst:.2f}x)")
    fit_llc = fitted_growth({n: results[n]["llc -O2"] for n in ordered}) if len(ordered) > 1 else float("nan")
    print(f"      llc -O2 itself grows {fit_llc:.2f}x per doubling")
    return 0


if __name__ == "__main__":
    sys.exit(main())
