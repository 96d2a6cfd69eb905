"""How long one workbench Run takes, and how it grows with the program, next to `gctoy run` in the same run.

For programs of N lines (a @main that allocates N/2 objects and keeps them across a collection),
``gctoy.workbench.run_ir`` does everything the widget's Run button does: parse and verify, RS4GC and
the safepoint verifier (each stage printed and diffed), x86-64 lowering, Capstone's listing with the
records linked, a run under the collector with GC stress, and the recorded trace for the stepper.
The reference is ``python -m gctoy run --stress`` on the same file, a new process each time (what a
reader would type instead). Best of ``--repeat`` runs each.

Every object is live across every later allocation, so RS4GC's output grows with the square of the
program (a relocate per live object per allocation): the "IR after" column counts the lines the
passes leave, the size of the work the lowering, the stack map and the run then do.

Target: a 50-line program under ``TARGET_SECONDS`` for one Run. It always exits 0: a report, not a gate.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO)]

from gctoy.workbench import run_ir  # noqa: E402

TARGET_SECONDS = 1.0
HEAD = """declare i8 addrspace(1)* @gc_alloc(i64, i64)
declare void @gc_collect()
declare void @print_i64(i64)

define i64 @main() gc "statepoint-example" {
"""


def program(lines: int) -> str:
    """A @main of about ``lines`` lines: allocations, a collection, loads of every object afterwards."""
    k = max(1, (lines - 8) // 4)
    body = [f"  %o{i} = call i8 addrspace(1)* @gc_alloc(i64 1, i64 0)" for i in range(k)]
    body.append("  call void @gc_collect()")
    acc = "0"
    for i in range(k):
        body += [f"  %p{i} = bitcast i8 addrspace(1)* %o{i} to i64 addrspace(1)*",
                 f"  %v{i} = load i64, i64 addrspace(1)* %p{i}", f"  %s{i} = add i64 {acc}, %v{i}"]
        acc = f"%s{i}"
    return HEAD + "\n".join(body) + f"\n  call void @print_i64(i64 {acc})\n  ret i64 0\n}}\n"


def best(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--sizes", default="25,50,100,200", help="comma-separated program sizes, in lines")
    args, _ = parser.parse_known_args(argv)
    print(f"{'lines':>6} {'IR after':>9} {'workbench Run (s)':>18} {'gctoy run --stress (s)':>23} {'ratio':>6}")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for lines in (int(size) for size in args.sizes.split(",")):
            text = program(lines)
            path = Path(tmp) / f"p{lines}.ll"
            path.write_text(text)
            result = run_ir(text)
            assert result.ok, result.problem
            ours = best(lambda: run_ir(text), args.repeat)
            cli = best(lambda: subprocess.run([sys.executable, "-m", "gctoy", "run", "--stress", str(path)],
                                              check=True, capture_output=True, cwd=REPO), args.repeat)
            after = len(result.stages[-1].ir.splitlines())
            rows.append((len(text.splitlines()), after, ours))
            print(f"{len(text.splitlines()):>6} {after:>9} {ours:>18.3f} {cli:>23.3f} {ours / cli:>6.2f}")
    if len(rows) > 1:
        (n1, a1, t1), (n2, a2, t2) = rows[-2], rows[-1]
        print(
            f"growth from {n1} to {n2} lines: x{t2 / t1:.2f} for x{n2 / n1:.2f} the lines "
            f"(x{a2 / a1:.2f} the IR after the passes)"
        )
    fifty = min(rows, key=lambda row: abs(row[0] - 50))[2]
    verdict = "met" if fifty <= TARGET_SECONDS else "missed"
    print(f"target: one Run of a ~50-line program under {TARGET_SECONDS:g} s: {verdict} ({fifty:.3f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
