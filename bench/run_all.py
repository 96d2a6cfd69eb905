"""Run every ``bench/bench_*.py`` in turn, each as its own process; arguments are passed to each.

A benchmark reports, it does not gate: this exits 1 only if a benchmark script itself fails.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main(argv: list[str]) -> int:
    failed = []
    scripts = sorted(HERE.glob("bench_*.py"))
    for script in scripts:
        print(f"=== {script.name}", flush=True)
        r = subprocess.run([sys.executable, str(script), *argv])
        if r.returncode != 0:
            failed.append(script.name)
        print(flush=True)
    if failed:
        print(f"benchmark scripts that failed: {', '.join(failed)}", file=sys.stderr)
        return 1
    print(f"{len(scripts)} benchmark(s) run")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
