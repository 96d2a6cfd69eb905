"""Run mode counts every instruction exactly, fresh, after stepping and breakpoints, and with the
Python block-hook counter. (How fast run mode is, against that counter: bench/bench_emu.py.)"""

from __future__ import annotations

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


def spin_result(iterations: int) -> int:
    """What ``spin(iterations)`` returns, computed in Python."""
    rax = 0
    for rdi in range(iterations, 0, -1):
        rax = ((rax + rdi) & (2**64 - 1)) ^ 0x55
    return rax


def test_run_mode_counts_every_instruction() -> None:
    m = Machine(Image.from_assembly(LOOP))
    m.call("spin", 1000)  # translate once
    iterations = 1_000_000
    m.instructions = 0
    assert m.call("spin", iterations) == spin_result(iterations)
    assert m.instructions == 4 * iterations + 2


def test_run_mode_counts_after_steps_and_breakpoints() -> None:
    m = Machine(Image.from_assembly(LOOP))
    m.add_breakpoint(m.image.address_of(".Lagain"))
    m.enter("spin", 3)
    m.run()
    m.step()
    m.remove_breakpoint(m.image.address_of(".Lagain"))
    m.instructions = 0
    assert m.call("spin", 500_000) == spin_result(500_000)
    assert m.instructions == 2_000_002


def test_python_counter_counts_the_same() -> None:
    m = Machine(Image.from_assembly(LOOP), native_counting=False)
    assert m.call("spin", 500_000) == spin_result(500_000)
    assert m.instructions == 2_000_002
