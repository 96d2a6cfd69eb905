"""How quickly the book's stepper answers: single steps, runs to the next safepoint, a recorded trace.

1. ``Machine.step()`` on a compiled program: the mean latency of one single-stepped instruction
   (the stepper's "step" button), over 2,000 steps.
2. Running from one safepoint to the next at full speed (the "next safepoint" button): the mean
   over every runtime call of a generated program.
3. ``record_trace`` of chapter 09's program: all its states, and the time per state.

Targets: a step answers in <= 10 ms and a run to the next safepoint in <= 50 ms, so that the
widget feels immediate; printed as PASS/FAIL, exit status always 0 (a report, not a gate).
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "tests")]

from gctoy.emu.machine import StopReason  # noqa: E402
from gctoy.ir import parse_module  # noqa: E402
from gctoy.passes import run as run_pass  # noqa: E402
from gctoy.runtime.run import Runtime, load_compiled  # noqa: E402
from gctoy.runtime.trace import LIST3, record_trace  # noqa: E402
from runnable_gen import generate_program  # noqa: E402

STEP_TARGET_MS = 10.0
NEXT_SAFEPOINT_TARGET_MS = 50.0


def compiled(text: str):
    m = parse_module(text)
    run_pass(m, "rewrite-statepoints-for-gc")
    return load_compiled(m)


def step_latency(n: int = 2000) -> float:
    runtime = Runtime(compiled(generate_program(3, 20)), gc="semispace")
    machine = runtime.machine
    machine.enter("main")
    t0 = time.perf_counter()
    done = 0
    for _ in range(n):
        stop = machine.step()
        done += 1
        if stop.reason is StopReason.RETURNED:
            break
    return (time.perf_counter() - t0) / done * 1000


def next_safepoint_latency() -> tuple[float, int]:
    """A whole stress run divided by its runtime calls: each call is one "next safepoint" press
    (run at full speed to the next call into the runtime, collect there)."""
    runtime = Runtime(compiled(generate_program(3, 20)), gc="semispace", stress=True)
    t0 = time.perf_counter()
    result = runtime.run()
    elapsed = time.perf_counter() - t0
    calls = max(result.stats.runtime_calls, 1)
    return elapsed / calls * 1000, calls


def main() -> int:
    step_ms = step_latency()
    next_ms, calls = next_safepoint_latency()
    t0 = time.perf_counter()
    trace = record_trace(LIST3)
    trace_s = time.perf_counter() - t0
    print("Stepper latency (wall clock)")
    print(f"  single step:                {step_ms:8.3f} ms per instruction")
    print(f"  run to the next safepoint:  {next_ms:8.3f} ms per runtime call ({calls} calls, stress mode)")
    print(f"  record_trace(LIST3):        {trace_s:8.3f} s for {len(trace.states)} states "
          f"({trace_s / max(len(trace.states), 1) * 1000:.1f} ms per state)")
    print(f"{'PASS' if step_ms <= STEP_TARGET_MS else 'FAIL'}  a step answers within {STEP_TARGET_MS:.0f} ms")
    print(f"{'PASS' if next_ms <= NEXT_SAFEPOINT_TARGET_MS else 'FAIL'}  the next safepoint within "
          f"{NEXT_SAFEPOINT_TARGET_MS:.0f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
