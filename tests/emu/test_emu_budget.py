"""The machine's run budget (instructions and wall clock, over many runs) and faults in guest terms."""

from __future__ import annotations

import time

import pytest

from gctoy.emu import Image, Machine, StopReason
from gctoy.emu.budget import BudgetExceeded, count_return_addresses
from gctoy.errors import EmulationFault

SPIN = "main:\n  nop\n.Lspin:\n  jmp .Lspin\n"
SPIN_CALLING = "main:\n.Lagain:\n  call tick\n  jmp .Lagain\n"
RECURSE = "main:\n  push rbx\n  call main\n  ret\n"
DIVIDE = "main:\n  mov rax, 7\n  xor ecx, ecx\n  cqo\n  idiv rcx\n  ret\n"
RECURSE_32 = "main:\n  push ebx\n  call main\n  ret\n"
DIVIDE_32 = "main:\n  mov eax, 7\n  xor ecx, ecx\n  cdq\n  idiv ecx\n  ret\n"


def _machine(text: str, arch: str = "x86_64", natives=("tick",)) -> Machine:
    return Machine(Image.from_assembly(text, arch=arch, natives=list(natives)))


def test_instruction_budget_ends_a_spinning_guest_and_names_the_function() -> None:
    m = _machine(SPIN)
    m.start_budget(10_000)
    with pytest.raises(BudgetExceeded) as info:
        m.call("main")
    assert info.value.kind == "instructions"
    assert "instruction budget of 10000 instructions spent in @main" in str(info.value)
    assert m.instructions == 10_000


def test_instruction_budget_spans_runs_split_by_breakpoints() -> None:
    m = _machine(SPIN)
    m.enter("main")
    m.start_budget(1000)
    for _ in range(10):  # per-run limits of 90 leave 100 instructions of the budget
        assert m.run(max_instructions=90).reason is StopReason.LIMIT
    with pytest.raises(BudgetExceeded):
        m.run(max_instructions=500)
    assert m.instructions == 1000
    with pytest.raises(BudgetExceeded):
        m.step()  # single steps count as well


def test_no_budget_keeps_the_per_run_limit_a_plain_stop() -> None:
    m = _machine(SPIN)
    m.enter("main")
    assert m.run(max_instructions=50).reason is StopReason.LIMIT
    m.start_budget(None, None)
    assert m.run(max_instructions=50).reason is StopReason.LIMIT


def test_wall_clock_budget_ends_a_guest_that_spins_in_guest_code() -> None:
    m = _machine(SPIN)
    m.start_budget(None, 0.3)
    with pytest.raises(BudgetExceeded) as info:
        m.call("main")
    assert info.value.kind == "seconds" and "wall-clock budget of 0.3 s spent in @main" in str(info.value)


def test_wall_clock_budget_is_checked_before_native_calls() -> None:
    m = _machine(SPIN_CALLING)
    calls = []

    def tick() -> None:
        calls.append(1)
        time.sleep(0.01)  # the time goes by in the runtime, not in guest code

    m.register_native("tick", tick)
    m.start_budget(None, 0.2)
    with pytest.raises(BudgetExceeded) as info:
        m.call("main")
    assert "in the runtime's @tick, called from @main" in str(info.value)
    assert calls  # the natives ran until the budget was spent


def test_check_budget_raises_only_once_the_deadline_passed() -> None:
    m = _machine(SPIN)
    m.check_budget()  # no budget: nothing to check
    m.start_budget(None, 0.05)
    m.check_budget()
    time.sleep(0.06)
    with pytest.raises(BudgetExceeded, match="during a collection"):
        m.check_budget("during a collection")
    m.stop_budget()
    m.check_budget()


@pytest.mark.parametrize("text,arch", [(RECURSE, "x86_64"), (RECURSE_32, "x86_32")])
def test_stack_overflow_is_named_with_the_frames_on_the_stack(text: str, arch: str) -> None:
    m = _machine(text, arch)
    with pytest.raises(EmulationFault) as info:
        m.call("main")
    message = str(info.value)
    assert "stack overflow after" in message and "frames in @main" in message
    frames = int(message.split("stack overflow after ")[1].split()[0])
    word = 8 if arch == "x86_64" else 4
    assert frames == pytest.approx(0x100000 / (2 * word), rel=0.01)  # each frame: a push and a return address


@pytest.mark.parametrize("text,arch", [(DIVIDE, "x86_64"), (DIVIDE_32, "x86_32")])
def test_division_by_zero_is_a_divide_error_in_the_function(text: str, arch: str) -> None:
    m = _machine(text, arch)
    with pytest.raises(EmulationFault) as info:
        m.call("main")
    assert "divide error" in info.value.message and "in @main at pc" in info.value.message
    assert info.value.disassembly.startswith("idiv")


def test_count_return_addresses_needs_a_call_before_the_address() -> None:
    code = b"\x90" * 3 + b"\xe8\x00\x00\x00\x00" + b"\x90"  # a call rel32 ending at offset 8
    base = 0x1000
    stack = (base + 8).to_bytes(8, "little") + (base + 2).to_bytes(8, "little") + (0).to_bytes(8, "little")
    assert count_return_addresses(stack, 8, code, base) == 1


def test_a_jump_into_the_heap_is_named() -> None:
    m = Machine(Image.from_assembly("main:\n  mov rax, 0x10000000\n  jmp rax\n"), heap_size=0x1000)
    with pytest.raises(EmulationFault, match="jump to non-executable memory at 0x10000000 \\(the heap\\)"):
        m.call("main")
