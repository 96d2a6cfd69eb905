"""Run mode must stay fast: no per-instruction Python hook."""

from __future__ import annotations

import time

from gctoy.emu import Image, Machine

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


def test_emu_speed_run_mode_counts_fast() -> None:
    m = Machine(Image.from_assembly(LOOP))
    m.call("spin", 1000)  # translate once
    iterations = 10_000_000
    m.instructions = 0
    started = time.perf_counter()
    m.call("spin", iterations)
    elapsed = time.perf_counter() - started
    assert m.instructions == 4 * iterations + 2
    rate = m.instructions / elapsed
    print(f"\nrun mode: {m.instructions} instructions in {elapsed:.3f} s = {rate / 1e6:.1f} M/s")
    assert rate >= 5e6


def test_emu_speed_stays_fast_after_steps_and_breakpoints() -> None:
    m = Machine(Image.from_assembly(LOOP))
    m.add_breakpoint(m.image.address_of(".Lagain"))
    m.enter("spin", 3)
    m.run()
    m.step()
    m.remove_breakpoint(m.image.address_of(".Lagain"))
    started = time.perf_counter()
    m.call("spin", 5_000_000)
    rate = 20_000_002 / (time.perf_counter() - started)
    print(f"\nrun mode after stepping: {rate / 1e6:.1f} M/s")
    assert rate >= 5e6


def test_emu_speed_python_counter_for_comparison() -> None:
    m = Machine(Image.from_assembly(LOOP), native_counting=False)
    started = time.perf_counter()
    m.call("spin", 500_000)
    elapsed = time.perf_counter() - started
    assert m.instructions == 2_000_002
    print(f"\nPython block-hook counter: {m.instructions / elapsed / 1e6:.1f} M/s")
