"""How fast the emulator's run mode is, next to the Python block-hook counter in the same run.

A four-instruction loop runs at full speed three ways, best of ``--repeat`` runs each:

* run mode (native instruction counting: no Python code per instruction or per block);
* run mode again after single steps, a breakpoint hit and its removal (the stepper's usual
  history; nothing of it may stay behind and slow the machine down);
* the reference: the same loop with ``native_counting=False``, which counts in a Python hook
  on every translated block.

Targets: run mode at least ``TARGET_SPEEDUP`` times the rate of the Python counter, and after
stepping at least ``TARGET_AFTER_STEPS`` of the fresh run mode's rate. It always exits 0: it is
a report, not a gate. (tests/emu/test_emu_run_counts.py checks that every way counts exactly.)
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO)]

from gctoy.emu import Image, Machine  # noqa: E402

LOOP = """
spin:                       # rdi = iterations; 4 instructions per iteration
    xor eax, eax
.Lagain:
    add rax, rdi
    xor rax, 0x55
    dec rdi
    jnz .Lagain
    ret
"""
TARGET_SPEEDUP = 20.0
TARGET_AFTER_STEPS = 0.8


def rate(machine: Machine, iterations: int, repeat: int) -> float:
    """The best rate (instructions per second) of ``spin(iterations)`` on ``machine``."""
    machine.call("spin", 1000)  # translate once
    best = 0.0
    for _ in range(repeat):
        machine.instructions = 0
        t0 = time.perf_counter()
        machine.call("spin", iterations)
        best = max(best, machine.instructions / (time.perf_counter() - t0))
    return best


def stepped_machine() -> Machine:
    """A machine that has single-stepped and stopped at a breakpoint that is gone again."""
    m = Machine(Image.from_assembly(LOOP))
    label = m.image.address_of(".Lagain")
    m.add_breakpoint(label)
    m.enter("spin", 3)
    m.run()
    m.step()
    m.remove_breakpoint(label)
    m.run()
    return m


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--iterations", type=int, default=2_500_000, help="loop iterations per run (4 instructions each)")
    ap.add_argument("--repeat", type=int, default=3, help="runs per measurement, the best is kept")
    args = ap.parse_args(argv)

    fresh = rate(Machine(Image.from_assembly(LOOP)), args.iterations, args.repeat)
    after = rate(stepped_machine(), args.iterations, args.repeat)
    hook = rate(Machine(Image.from_assembly(LOOP), native_counting=False), args.iterations, args.repeat)
    print(f"emulator run mode (best of {args.repeat}; {4 * args.iterations + 2} instructions per run)")
    print(f"  run mode:                          {fresh / 1e6:7.1f} M instructions/s")
    print(f"  run mode after steps, breakpoints: {after / 1e6:7.1f} M instructions/s")
    print(f"  Python block-hook counter (ref.):  {hook / 1e6:7.1f} M instructions/s")
    print()
    verdicts = [
        (f"run mode is {fresh / hook:.1f}x the Python counter (target >= {TARGET_SPEEDUP:g}x)",
         fresh / hook >= TARGET_SPEEDUP),
        (f"after stepping, run mode keeps {after / fresh:.2f} of its rate (target >= {TARGET_AFTER_STEPS:g})",
         after / fresh >= TARGET_AFTER_STEPS),
    ]
    for text, ok in verdicts:
        print(f"{'PASS' if ok else 'FAIL'}  {text}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
