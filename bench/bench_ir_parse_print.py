"""How fast gctoy reads and writes LLVM IR, next to LLVM 14's ``opt`` on the same files.

A reproducible generator (``tests/random_ir.py``, fixed seed) writes modules of 12.5k, 25k and
50k lines: many functions with phis, branches, loops, arithmetic, casts, loads, stores, GEPs
over typed pointers and structs, calls, and modern-form statepoints with relocations. Each file
is then timed, best of ``--repeat`` runs, all in this one run:

* in-process: ``parse_module`` + ``print_module``, and the same with ``check_module`` between;
* whole process: a ``python`` that parses and prints, and ``gctoy opt -passes=verify -S``;
* whole process: ``opt -passes=verify -S`` (LLVM 14).

It prints the times, the ratio to ``opt`` and the growth factor per doubling of the input, and
checks two targets: ``gctoy opt -passes=verify -S`` at most 15x ``opt`` at 50k lines, and linear
growth (each doubling of the input at most 2.3x the time; quadratic work would show ~4x).
Before timing, gctoy's bytecode is brought up to date (``compileall``), as an installed package
has it: where ``PYTHONDONTWRITEBYTECODE`` is set, every ``gctoy`` process would otherwise compile
the package from source first, and the whole-process rows would measure that too.

It always exits 0: it is a report, not a gate.
"""

from __future__ import annotations

import argparse
import compileall
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "tests")]

from gctoy.ir import parse_module, print_module  # noqa: E402
from gctoy.ir.verifier import check_module  # noqa: E402
from gctoy.llvm_tools import find_llvm  # noqa: E402
from random_ir import module_of_lines  # noqa: E402

SIZES = (12_500, 25_000, 50_000)
TARGET_RATIO = 15.0
TARGET_GROWTH = 2.3
PARSE_PRINT_SCRIPT = (
    "import sys\n"
    "from gctoy.ir import parse_module, print_module\n"
    "text = open(sys.argv[1], encoding='utf-8').read()\n"
    "open(sys.argv[2], 'w', encoding='utf-8').write(print_module(parse_module(text, sys.argv[1])))\n"
)


def best_of(repeat: int, fn) -> float:
    """The smallest wall time of ``repeat`` calls of ``fn`` (seconds)."""
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def run_checked(cmd: list[str]) -> None:
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"benchmark command failed: {' '.join(cmd)}\n{r.stderr}")


def measure(path: Path, out: Path, opt: str | None, repeat: int) -> dict[str, float]:
    text = path.read_text(encoding="utf-8")

    def in_process(verify: bool):
        def go():
            m = parse_module(text, str(path))
            if verify:
                check_module(m)
            print_module(m)
        return go

    row = {
        "parse+print (in-process)": best_of(repeat, in_process(False)),
        "parse+verify+print (in-process)": best_of(repeat, in_process(True)),
        "parse+print (process)": best_of(repeat, lambda: run_checked(
            [sys.executable, "-c", PARSE_PRINT_SCRIPT, str(path), str(out)])),
        "gctoy opt -passes=verify -S": best_of(repeat, lambda: run_checked(
            [sys.executable, "-m", "gctoy.cli", "opt", "-passes=verify", "-S", str(path), "-o", str(out)])),
    }
    if opt is not None:
        row["opt -passes=verify -S"] = best_of(repeat, lambda: run_checked(
            [opt, "-passes=verify", "-S", str(path), "-o", str(out)]))
    return row


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=lambda s: tuple(int(x) for x in s.split(",")), default=SIZES,
                    help="comma-separated line counts (default 12500,25000,50000)")
    ap.add_argument("--repeat", type=int, default=5, help="runs per measurement, the best is kept")
    ap.add_argument("--seed", type=int, default=2024)
    args = ap.parse_args(argv)

    compileall.compile_dir(str(REPO / "gctoy"), quiet=1, workers=0)
    tools, why = find_llvm(14)
    opt = str(tools.opt) if tools else None
    if opt is None:
        print(f"note: {why}; only gctoy's own times are shown")

    results: dict[int, dict[str, float]] = {}
    lines_of: dict[int, int] = {}
    with tempfile.TemporaryDirectory(prefix="gctoy-bench-") as tmp:
        for size in args.sizes:
            path = Path(tmp) / f"gen_{size}.ll"
            text = module_of_lines(size, args.seed)
            path.write_text(text, encoding="utf-8")
            lines_of[size] = text.count("\n")
            results[size] = measure(path, Path(tmp) / "out.ll", opt, args.repeat)

    columns = list(next(iter(results.values())))
    print(f"gctoy IR parse/print benchmark (best of {args.repeat}; seconds; python {sys.version.split()[0]})")
    print()
    header = f"{'lines':>7} | " + " | ".join(f"{c:>31}" for c in columns)
    print(header)
    print("-" * len(header))
    for size in args.sizes:
        print(f"{lines_of[size]:>7} | " + " | ".join(f"{results[size][c]:>31.3f}" for c in columns))

    verdicts: list[tuple[str, bool]] = []
    if opt is not None:
        print()
        print("ratio to opt -passes=verify -S (whole processes unless marked in-process)")
        for size in args.sizes:
            base = results[size]["opt -passes=verify -S"]
            parts = [f"{c}: {results[size][c] / base:6.1f}x" for c in columns if c != "opt -passes=verify -S"]
            print(f"{lines_of[size]:>7} | " + " | ".join(parts))
        largest = max(args.sizes)
        ratio = results[largest]["gctoy opt -passes=verify -S"] / results[largest]["opt -passes=verify -S"]
        verdicts.append((f"gctoy opt -passes=verify -S at {lines_of[largest]} lines is {ratio:.1f}x opt "
                         f"(target <= {TARGET_RATIO:.0f}x)", ratio <= TARGET_RATIO))

    print()
    print("growth factor per doubling of the input")
    ordered = sorted(args.sizes)
    for small, big in zip(ordered, ordered[1:]):
        parts = [f"{c}: {results[big][c] / results[small][c]:4.2f}" for c in columns]
        print(f"{lines_of[small]:>6} -> {lines_of[big]:>6} | " + " | ".join(parts))
        if big == 2 * small:
            for c in ("parse+print (in-process)", "gctoy opt -passes=verify -S"):
                g = results[big][c] / results[small][c]
                verdicts.append((f"{c}: x{g:.2f} from {lines_of[small]} to {lines_of[big]} lines "
                                 f"(target <= {TARGET_GROWTH})", g <= TARGET_GROWTH))

    print()
    for text, ok in verdicts:
        print(f"{'PASS' if ok else 'FAIL'}  {text}")
    spread = statistics.mean(results[s]["parse+print (in-process)"] / lines_of[s] * 1e6 for s in args.sizes)
    print(f"\nmean in-process parse+print cost: {spread:.1f} microseconds per line")
    return 0


if __name__ == "__main__":
    sys.exit(main())
