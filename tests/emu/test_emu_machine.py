"""The Unicorn machine: calls in both conventions, natives, counting, breakpoints, faults."""

from __future__ import annotations

import platform
import sys

import pytest
from unicorn import UC_HOOK_CODE

from gctoy.emu import RETURN_TRAP, STUB_BASE, Image, Machine, StopReason
from gctoy.errors import EmulationFault

FACTORIAL_64 = """
factorial:                  # rdi = n, recursive
    cmp rdi, 1
    jg .Lrecurse
    mov eax, 1
    ret
.Lrecurse:
    push rdi
    dec rdi
    call factorial
    pop rdi
    imul rax, rdi
    ret
"""

SUM_AND_PRINT_64 = """
sum_array:                  # rdi = pointer, rsi = count
    xor eax, eax
.Lloop:
    test rsi, rsi
    je .Ldone
    add rax, qword ptr [rdi]
    add rdi, 8
    dec rsi
    jmp .Lloop
.Ldone:
    ret
main:
    push rbx
    movabs rdi, table
    mov esi, 5
    call sum_array
    mov rbx, rax
    mov rdi, rax
    call print_i64
    mov rdi, -7
    call print_i64
    lea rax, [rbx + rax]
    pop rbx
    ret
"""
TABLE_64 = "table: .quad 10, 20, 30, 40, -3\n"

FACTORIAL_32 = """
factorial:                  # cdecl: [esp + 4] = n
    mov ecx, dword ptr [esp + 4]
    cmp ecx, 1
    jg .Lrecurse
    mov eax, 1
    ret
.Lrecurse:
    push ecx
    dec ecx
    push ecx
    call factorial
    add esp, 4
    pop ecx
    imul eax, ecx
    ret
"""

SUM_AND_PRINT_32 = """
sum_array:                  # cdecl: [esp + 4] = pointer, [esp + 8] = count
    mov edx, dword ptr [esp + 4]
    mov ecx, dword ptr [esp + 8]
    xor eax, eax
.Lloop:
    test ecx, ecx
    je .Ldone
    add eax, dword ptr [edx]
    add edx, 4
    dec ecx
    jmp .Lloop
.Ldone:
    ret
main:
    push ebx
    push 5
    push table
    call sum_array
    add esp, 8
    mov ebx, eax
    push eax
    call print_i64
    add esp, 4
    mov eax, ebx
    pop ebx
    ret
"""
TABLE_32 = "table: .long 10, 20, 30, 40, -3\n"


def _machine(text: str, data: str = "", arch: str = "x86_64", **kw) -> Machine:
    return Machine(Image.from_assembly(text, data_text=data, arch=arch, natives=["print_i64"]), **kw)


@pytest.mark.parametrize("n,expected", [(0, 1), (1, 1), (5, 120), (10, 3628800), (20, 2432902008176640000)])
def test_emu_machine_factorial_64(n: int, expected: int) -> None:
    assert _machine(FACTORIAL_64).call("factorial", n) == expected


@pytest.mark.parametrize("n,expected", [(1, 1), (5, 120), (12, 479001600)])
def test_emu_machine_factorial_32(n: int, expected: int) -> None:
    m = _machine(FACTORIAL_32, arch="x86_32")
    assert m.call("factorial", n) == expected
    assert m.returned() and m.pc == RETURN_TRAP


def test_emu_machine_sum_array_with_native_print_64() -> None:
    m = _machine(SUM_AND_PRINT_64, TABLE_64)
    printed: list[int] = []
    m.register_native("print_i64", lambda value: printed.append(value) or len(printed))
    assert m.call("main") == 97 + 2
    assert printed == [97, -7]
    assert m.read_u64(m.image.address_of("table") + 32) == 2**64 - 3


def test_emu_machine_sum_array_with_native_print_32() -> None:
    m = _machine(SUM_AND_PRINT_32, TABLE_32, arch="x86_32")
    printed: list[int] = []
    m.register_native("print_i64", printed.append)
    assert m.call("main") == 97
    assert printed == [97]
    assert m.call("sum_array", m.image.address_of("table"), 2) == 30


def test_emu_machine_jit32_convention_and_callee_popped_native() -> None:
    text = """
    caller:                 # jit32: ecx, edx, then stack arguments pushed left to right
        push 3
        push 4
        mov ecx, 1
        mov edx, 2
        call combine        # the native pops its two stack words (ret 8)
        add eax, esp        # esp back where it was: the result is combine(...) + esp
        sub eax, esp
        ret
    """
    m = Machine(Image.from_assembly(text, arch="x86_32", natives=["combine"]), convention="jit32")
    seen = []
    m.register_native("combine", lambda a, b, c, d: seen.append((a, b, c, d)) or a * 1000 + b * 100 + c * 10 + d)
    assert m.call("caller") == 1234
    assert seen == [(1, 2, 3, 4)]


def test_emu_machine_more_than_six_sysv_arguments() -> None:
    text = "f:\n  mov rax, rdi\n  add rax, r9\n  add rax, qword ptr [rsp + 8]\n  add rax, qword ptr [rsp + 16]\n  ret"
    m = _machine(text)
    assert m.call("f", 1, 0, 0, 0, 0, 20, 300, 4000) == 4321


def test_emu_machine_native_not_declared_in_image_gets_a_free_stub() -> None:
    text = "main:\n  movabs rax, 0x7f0000\n  mov edi, 41\n  call rax\n  ret"
    m = Machine(Image.from_assembly(text))
    assert m.register_native("inc", lambda v: v + 1) == STUB_BASE
    assert m.call("main") == 42


def test_emu_machine_native_exception_propagates() -> None:
    m = _machine(SUM_AND_PRINT_64, TABLE_64)

    def boom(_value: int) -> None:
        raise ValueError("native failed")

    m.register_native("print_i64", boom)
    with pytest.raises(ValueError, match="native failed"):
        m.call("main")


def _count_with_code_hook(m: Machine, function: str, *args: int) -> int:
    """The slow reference: a Python hook on every instruction."""
    counted = [0]

    def on_insn(_uc, _address, _size, _user) -> None:
        counted[0] += 1

    handle = m.uc.hook_add(UC_HOOK_CODE, on_insn)
    try:
        m.call(function, *args)
    finally:
        m.uc.hook_del(handle)
    return counted[0]


@pytest.mark.parametrize("native", [True, False], ids=["native-counter", "python-counter"])
@pytest.mark.parametrize("arch", ["x86_64", "x86_32"])
def test_emu_machine_block_count_equals_per_instruction_count(arch: str, native: bool) -> None:
    text, data = (SUM_AND_PRINT_64, TABLE_64) if arch == "x86_64" else (SUM_AND_PRINT_32, TABLE_32)
    fast = _machine(text, data, arch, native_counting=native)
    fast.register_native("print_i64", lambda v: None)
    slow = _machine(text, data, arch)
    slow.register_native("print_i64", lambda v: None)
    fast.call("main")
    reference = _count_with_code_hook(slow, "main")
    assert fast.instructions == reference > 30


@pytest.mark.parametrize("native", [True, False], ids=["native-counter", "python-counter"])
def test_emu_machine_max_instructions_is_exact_and_resumable(native: bool) -> None:
    m = _machine(FACTORIAL_64, native_counting=native)
    total = _machine(FACTORIAL_64)
    total.call("factorial", 6)
    m.enter("factorial", 6)
    stop = m.run(max_instructions=7)
    assert stop.reason is StopReason.LIMIT and stop.instructions == 7 and m.instructions == 7
    steps = 0
    while m.run(max_instructions=3).reason is StopReason.LIMIT:
        steps += 1
    assert m.instructions == total.instructions
    assert m.return_value() == 720
    with pytest.raises(EmulationFault, match="did not return"):
        m.call("factorial", 6, max_instructions=5)


def test_emu_machine_breakpoint_stops_at_the_right_pc() -> None:
    m = _machine(SUM_AND_PRINT_64, TABLE_64)
    m.register_native("print_i64", lambda v: None)
    done = m.image.address_of(".Ldone")
    m.add_breakpoint(done)
    m.enter("main")
    stop = m.run()
    assert stop.reason is StopReason.BREAKPOINT and stop.pc == done == m.pc
    assert m.reg("rax") == 97  # the loop finished, ret has not run yet
    # Resuming executes the instruction under the breakpoint and runs on to the return.
    assert m.run().reason is StopReason.RETURNED
    assert m.return_value() == 97
    # call() ignores breakpoints.
    assert m.call("main") == 97
    m.remove_breakpoint(done)
    m.enter("main")
    assert m.run().reason is StopReason.RETURNED


@pytest.mark.parametrize("native", [True, False], ids=["native-counter", "python-counter"])
def test_emu_machine_breakpoint_counts_match_reference(native: bool) -> None:
    m = _machine(FACTORIAL_64, native_counting=native)
    body = m.image.address_of(".Lrecurse")
    m.add_breakpoint(body)
    m.enter("factorial", 4)
    hits = 0
    while m.run().reason is StopReason.BREAKPOINT:
        hits += 1
    assert hits == 3 and m.return_value() == 24
    reference = _count_with_code_hook(_machine(FACTORIAL_64), "factorial", 4)
    assert m.instructions == reference


def test_emu_machine_native_counter_is_used_on_x86_64_linux() -> None:
    if sys.platform != "linux" or platform.machine() != "x86_64":
        pytest.skip("the machine-code block counter needs an x86-64 Linux host")
    assert _machine(FACTORIAL_64).counter.native
    assert not _machine(FACTORIAL_64, native_counting=False).counter.native


def test_emu_machine_fault_inside_a_block_counts_only_executed_instructions() -> None:
    text = "main:\n  mov eax, 1\n  add eax, 2\n  mov rbx, qword ptr [0x10 + rax]\n  ret"
    for native in (True, False):
        m = _machine(text, native_counting=native)
        with pytest.raises(EmulationFault):
            m.call("main")
        assert m.instructions == 2


def test_emu_machine_step_after_run_steps_one_instruction() -> None:
    m = _machine(FACTORIAL_64)
    m.call("factorial", 5)  # leaves translated blocks behind
    m.enter("factorial", 2)
    pcs = [m.step().pc for _ in range(4)]
    assert pcs == [0x400004, 0x40000C, 0x40000D, 0x400010]


def test_emu_machine_until_and_step() -> None:
    m = _machine(FACTORIAL_64)
    m.enter("factorial", 3)
    stop = m.run(until=".Lrecurse")
    assert stop == type(stop)(StopReason.UNTIL, m.image.address_of(".Lrecurse"), 2)
    before = m.sp
    assert m.step().pc == stop.pc + 1  # push rdi
    assert m.sp == before - 8 and m.stack_words(1)[0] == (m.sp, 3)
    while m.step().reason is StopReason.STEP:
        pass
    assert m.return_value() == 6
    reference = _count_with_code_hook(_machine(FACTORIAL_64), "factorial", 3)
    assert m.instructions == reference


def test_emu_machine_fault_names_pc_and_instruction() -> None:
    text = "main:\n  mov rax, 0x12345678\n  mov rbx, qword ptr [rax]\n  ret"
    m = _machine(text)
    with pytest.raises(EmulationFault) as info:
        m.call("main")
    fault = info.value
    assert fault.pc == 0x400000 + 7
    assert fault.disassembly == "mov rbx, qword ptr [rax]"
    assert "read" in fault.message and "0x12345678" in fault.message
    assert m.instructions == 1


def test_emu_machine_stray_int3_is_a_fault() -> None:
    m = _machine("main:\n  nop\n  int3\n  ret")
    with pytest.raises(EmulationFault, match="interrupt 3") as info:
        m.call("main")
    assert info.value.pc == 0x400001 and info.value.disassembly == "int3"


def test_emu_machine_runs_are_deterministic() -> None:
    def snapshot() -> tuple:
        m = _machine(SUM_AND_PRINT_64, TABLE_64)
        m.register_native("print_i64", lambda v: None)
        m.add_breakpoint(m.image.address_of(".Ldone"))
        m.enter("main")
        m.run()
        return m.regs(), m.stack_words(4), m.instructions, m.read(0x600000, 40)

    assert snapshot() == snapshot()


def test_emu_machine_memory_access_helpers() -> None:
    m = _machine("main: ret", "buf: .zero 16")
    m.write_u64(0x600008, 0xDEADBEEF)
    assert m.read_u64(0x600008) == 0xDEADBEEF and m.read(0x600000, 2) == b"\0\0"
    with pytest.raises(EmulationFault, match="unmapped"):
        m.read(0x5000_0000, 4)
    assert list(m.regs())[:3] == ["rax", "rbx", "rcx"]
    assert m.signed(2**64 - 1) == -1


def test_emu_machine_close_releases_the_engine() -> None:
    m = _machine(FACTORIAL_64)
    engine = m.uc
    finalizer = engine._Uc__finalizer  # Unicorn's own: alive until the engine is closed
    assert m.call("factorial", 5) == 120 and not m.closed and finalizer.alive
    m.close()
    assert m.closed and not finalizer.alive
    m.close()  # twice is harmless
    with pytest.raises(EmulationFault, match="the machine is closed"):
        m.call("factorial", 5)
    with pytest.raises(EmulationFault, match="the machine is closed"):
        m.pc


def test_emu_machine_context_manager_closes() -> None:
    with _machine(FACTORIAL_32, arch="x86_32") as m:
        assert m.call("factorial", 5) == 120
    assert m.closed
    with pytest.raises(ZeroDivisionError), _machine(FACTORIAL_64) as m2:
        1 // 0
    assert m2.closed
