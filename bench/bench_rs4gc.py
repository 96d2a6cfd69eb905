"""How fast gctoy's RewriteStatepointsForGC is, next to LLVM 14's ``opt`` on the same files.

The GC-program generator of the differential tests (``tests/gcprog_gen.py``, fixed seed)
writes one function each of about 2k, 4k, 8k, 16k and 32k instructions: allocations, calls
with and without deopt bundles, invokes, loops, diamonds, GEP chains, selects, loads and
stores of GC pointers. Operands are drawn from recently defined values, so live sets stay
bounded and the work RS4GC has to do grows linearly with the size.

Both are timed as whole processes, best of ``--repeat`` runs, in this one run:

* ``opt -passes=rewrite-statepoints-for-gc -S IN -o OUT`` (LLVM 14);
* ``python -m gctoy.cli opt -passes=rewrite-statepoints-for-gc -S IN -o OUT``.

It prints both times, the ratio and the growth factor per doubling of the input, and checks
two targets: gctoy at most 10x ``opt`` at the largest size, and each doubling at most 2.3x
gctoy's time (quadratic work would show ~4x). It always exits 0: it is a report, not a gate.
gctoy's bytecode is brought up to date first, as in ``bench_ir_parse_print.py``.
If gctoy does not have the pass (yet), it says so and shows LLVM's times only.
"""

from __future__ import annotations

import argparse
import compileall
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "tests")]

from gcprog_gen import generate  # noqa: E402
from gctoy.llvm_tools import find_llvm  # noqa: E402

SIZES = (2_000, 4_000, 8_000, 16_000, 32_000)
TARGET_RATIO = 10.0
TARGET_GROWTH = 2.3
PASS = "rewrite-statepoints-for-gc"
TIMEOUT = 3600


class Failed(Exception):
    """A command exited with an error (the message is its first lines of stderr)."""


def timed(cmd: list[str], repeat: int) -> float:
    """Best wall time of ``repeat`` runs of ``cmd`` (seconds); raises Failed on an error exit."""
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT, cwd=REPO)
        except subprocess.TimeoutExpired:
            raise Failed(f"no result within {TIMEOUT} s") from None
        elapsed = time.perf_counter() - t0
        if r.returncode != 0:
            raise Failed(" / ".join(r.stderr.strip().splitlines()[:3]) or f"exit status {r.returncode}")
        best = min(best, elapsed)
    return best


def instructions(text: str) -> int:
    return sum(1 for line in text.splitlines() if line.startswith("  ") and not line.startswith("  ;"))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=lambda s: tuple(int(x) for x in s.split(",")), default=SIZES,
                    help="comma-separated instruction counts (default 2000,4000,8000,16000,32000)")
    ap.add_argument("--repeat", type=int, default=3, help="runs per measurement, the best is kept")
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args(argv)

    compileall.compile_dir(str(REPO / "gctoy"), quiet=1, workers=0)
    tools, why = find_llvm(14)
    opt = str(tools.opt) if tools else None
    if opt is None:
        print(f"note: {why}; only gctoy's own times are shown")

    sizes = sorted(args.sizes)
    n_insts: dict[int, int] = {}
    out_lines: dict[int, int] = {}
    t_opt: dict[int, float] = {}
    t_gctoy: dict[int, float] = {}
    gctoy_problem: str | None = None
    opt_problem: str | None = None
    with tempfile.TemporaryDirectory(prefix="gctoy-bench-rs4gc-") as tmp:
        for size in sizes:
            src = Path(tmp) / f"gc_{size}.ll"
            text = generate(args.seed, size)
            src.write_text(text, encoding="utf-8")
            n_insts[size] = instructions(text)
            if opt is not None and opt_problem is None:
                out = Path(tmp) / f"gc_{size}.opt.ll"
                try:
                    t_opt[size] = timed([opt, f"-passes={PASS}", "-S", str(src), "-o", str(out)], args.repeat)
                    out_lines[size] = out.read_text(encoding="utf-8").count("\n")
                except Failed as e:
                    opt_problem = f"opt failed at {size} instructions: {e}"
            if gctoy_problem is None:
                out = Path(tmp) / f"gc_{size}.gctoy.ll"
                try:
                    t_gctoy[size] = timed([sys.executable, "-m", "gctoy.cli", "opt", f"-passes={PASS}", "-S",
                                           str(src), "-o", str(out)], args.repeat)
                except Failed as e:
                    gctoy_problem = f"gctoy failed at {size} instructions: {e}"
            print(f"  {n_insts[size]:>6} instructions: opt {_fmt(t_opt.get(size))}, "
                  f"gctoy {_fmt(t_gctoy.get(size))}", file=sys.stderr, flush=True)

    print(f"RewriteStatepointsForGC benchmark (whole processes, best of {args.repeat}; seconds; "
          f"python {sys.version.split()[0]})")
    print()
    header = (f"{'instructions':>12} | {'opt output lines':>16} | {'opt':>8} | {'gctoy':>8} | {'ratio':>7}"
              f" | {'opt growth':>10} | {'gctoy growth':>12}")
    print(header)
    print("-" * len(header))
    prev = None
    for size in sizes:
        ratio = t_gctoy[size] / t_opt[size] if size in t_gctoy and size in t_opt else None
        g_opt = t_opt[size] / t_opt[prev] if prev in t_opt and size in t_opt else None
        g_gctoy = t_gctoy[size] / t_gctoy[prev] if prev in t_gctoy and size in t_gctoy else None
        print(f"{n_insts[size]:>12} | {out_lines.get(size, '-'):>16} | {_fmt(t_opt.get(size)):>8} | "
              f"{_fmt(t_gctoy.get(size)):>8} | {_fmt(ratio, 'x', 1):>7} | {_fmt(g_opt, 'x'):>10} | "
              f"{_fmt(g_gctoy, 'x'):>12}")
        prev = size

    print()
    for problem in (opt_problem, gctoy_problem):
        if problem:
            print(f"note: {problem}")
    verdicts: list[tuple[str, bool]] = []
    largest = sizes[-1]
    if largest in t_gctoy and largest in t_opt:
        ratio = t_gctoy[largest] / t_opt[largest]
        verdicts.append((f"gctoy at {n_insts[largest]} instructions is {ratio:.1f}x opt "
                         f"(target <= {TARGET_RATIO:.0f}x)", ratio <= TARGET_RATIO))
    elif gctoy_problem or opt_problem:
        verdicts.append((f"ratio at {n_insts[largest]} instructions: not measured", False))
    for small, big in zip(sizes, sizes[1:]):
        if big == 2 * small and small in t_gctoy and big in t_gctoy:
            g = t_gctoy[big] / t_gctoy[small]
            verdicts.append((f"gctoy: x{g:.2f} from {n_insts[small]} to {n_insts[big]} instructions "
                             f"(target <= {TARGET_GROWTH})", g <= TARGET_GROWTH))
    if not any(big == 2 * small for small, big in zip(sizes, sizes[1:])):
        print("note: no two sizes a doubling apart; growth is not judged")
    for text, ok in verdicts:
        print(f"{'PASS' if ok else 'FAIL'}  {text}")
    return 0


def _fmt(x: float | None, unit: str = "", digits: int = 2) -> str:
    if x is None:
        return "-"
    return f"{x:.{digits}f}{unit}" if unit else f"{x:.{3 if x < 10 else 2}f}"


if __name__ == "__main__":
    sys.exit(main())
