"""Keystone assembly through gctoy.emu.asm: round trips, exact NOPs, the Keystone traps."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from gctoy.emu import (
    CANONICAL_NOPS,
    assemble,
    assemble_untrusted,
    check_assembly,
    compare_assembly,
    disassemble,
    find_rip_rewrites,
    nops,
)
from gctoy.emu.asm import hex_literals
from gctoy.errors import AssemblerError

BASE = 0x400000

ROUND_TRIPS_64 = [
    ("push rbp", "push", "rbp"),
    ("mov rbp, rsp", "mov", "rbp, rsp"),
    ("mov qword ptr [rbp - 8], rdi", "mov", "qword ptr [rbp - 8], rdi"),
    ("lea rax, [rbx + rcx*8 + 16]", "lea", "rax, [rbx + rcx*8 + 0x10]"),
    ("add rax, 0x7f", "add", "rax, 0x7f"),
    ("imul rax, rsi", "imul", "rax, rsi"),
    ("movabs rax, 0x1122334455667788", "movabs", "rax, 0x1122334455667788"),
    ("pop rbp", "pop", "rbp"),
    ("ret", "ret", ""),
]


@pytest.mark.parametrize("line,mnemonic,op_str", ROUND_TRIPS_64)
def test_emu_asm_round_trip_single_line_64(line: str, mnemonic: str, op_str: str) -> None:
    code = assemble(line, "x86_64", BASE, check=True)
    (insn,) = disassemble(code, BASE, "x86_64")
    assert (insn.mnemonic, insn.op_str) == (mnemonic, op_str)
    assert insn.size == len(code)


def test_emu_asm_round_trip_program_32_with_labels() -> None:
    text = "f:\n  mov eax, dword ptr [esp + 4]\n  cmp eax, 1\n  jle done\n  dec eax\ndone:\n  ret\n"
    code = assemble(text, "x86_32", BASE, check=True)
    texts = [i.text for i in disassemble(code, BASE, "x86_32")]
    assert texts == ["mov eax, dword ptr [esp + 4]", "cmp eax, 1", "jle 0x40000a", "dec eax", "ret"]


def test_emu_asm_att_syntax_checks_against_capstone() -> None:
    text = "movq 8(%rbx,%rcx,8), %rax\naddq $5, %rax\ncltq\nmovzbl (%rax), %ecx\nretq"
    code = assemble(text, "x86_64", BASE, syntax="att", check=True)
    assert [i.mnemonic for i in disassemble(code, BASE)] == ["mov", "add", "cdqe", "movzx", "ret"]


def test_emu_asm_decimal_literals_survive_keystone_radix_bug() -> None:
    # Keystone reads "$41" as 0x41 in AT&T mode and, after an AT&T instance has run, in Intel
    # mode too; gctoy hands it hex literals only. Assemble AT&T first to provoke the bug.
    assert assemble("movl $41, %edi", syntax="att", check=True) == bytes.fromhex("bf29000000")
    assert assemble("mov edi, 41\nadd rax, qword ptr [rsp + 16]", check=True) == bytes.fromhex(
        "bf29000000" "4803442410"
    )
    assert assemble(".quad 10, -20") == (10).to_bytes(8, "little") + (-20).to_bytes(8, "little", signed=True)
    assert hex_literals('mov r8, 12 # 12\n.ascii "12"\nfld st(1)') == 'mov r8, 0xc # 12\n.ascii "12"\nfld st(1)'


def test_emu_asm_rejects_bad_text_with_assembler_error() -> None:
    with pytest.raises(AssemblerError, match="keystone rejected"):
        assemble("frobnicate rax, rbx")


def test_emu_asm_rip_relative_rewrite_is_detected_and_explained() -> None:
    text = "mov dword ptr fs:[0x10], 1"
    code = assemble(text)
    # Keystone's bug, pinned: ModRM 05 (RIP-relative) instead of 04 25 (absolute via SIB).
    assert code[:3] == bytes.fromhex("64c705")
    found = find_rip_rewrites(text, code, BASE)
    assert len(found) == 1
    assert found[0].intended_bytes == bytes.fromhex("64c7042510000000 01000000")
    explanation = found[0].explain()
    assert "RIP-relative" in explanation and "line 1" in explanation
    with pytest.raises(AssemblerError, match="RIP-relative"):
        check_assembly(text, code, BASE)
    # The intended bytes do decode to the instruction that was meant.
    (insn,) = disassemble(found[0].intended_bytes, BASE)
    assert insn.text == "mov dword ptr fs:[0x10], 1"


def test_emu_asm_rip_relative_rewrite_att_form() -> None:
    text = "movl $1, %fs:0x10"
    code = assemble(text, syntax="att")
    (found,) = find_rip_rewrites(text, code, BASE, syntax="att")
    assert found.intended_bytes == bytes.fromhex("64c704251000000001000000")


def test_emu_asm_register_addressing_is_not_flagged() -> None:
    text = "mov rax, 0x10\nmov dword ptr fs:[rax], 1\nlea rcx, [rip + 8]"
    code = assemble(text)
    assert find_rip_rewrites(text, code, BASE) == []
    check_assembly(text, code, BASE)


def test_emu_asm_check_names_first_mismatch() -> None:
    text = "mov rax, rbx\nadd rax, 1\nret"
    code = assemble("mov rax, rbx\nadd rax, 2\nret")
    with pytest.raises(AssemblerError, match=r"line 2: 'add rax, 1'.*expected 0x1, found 0x2"):
        check_assembly(text, code, BASE)
    wrong_register = assemble("mov rax, rcx\nadd rax, 1\nret")
    (first, *_rest) = compare_assembly(text, wrong_register, BASE)
    assert first.line.number == 1 and "rbx" in first.reason


def test_emu_asm_check_reports_leftover_bytes() -> None:
    with pytest.raises(AssemblerError, match="left over"):
        check_assembly("nop", b"\x90\x90", BASE)


def test_emu_asm_check_handles_data_directives_and_alignment() -> None:
    text = "nop\n.p2align 3\nmov eax, 1\n.byte 1, 2\n.quad 7\n.ascii \"ab\"\n"
    code = assemble(text)
    check_assembly(text, code, BASE)


@pytest.mark.parametrize("n", range(0, 21))
def test_emu_asm_nops_exact_lengths(n: int) -> None:
    run = nops(n)
    assert len(run) == n
    insns = disassemble(run, BASE)
    assert sum(i.size for i in insns) == n
    assert all(i.mnemonic == "nop" for i in insns)
    assert all(i.size == 9 for i in insns[:-1])
    for arch in ("x86_64", "x86_32"):
        assert sum(i.size for i in disassemble(run, BASE, arch)) == n


def test_emu_asm_nops_are_intel_canonical() -> None:
    assert nops(5) == bytes.fromhex("0f1f440000")
    assert nops(8) == bytes.fromhex("0f1f840000000000")
    assert nops(11) == CANONICAL_NOPS[8] + bytes.fromhex("6690")
    # Keystone's own 5-byte NOP is not the canonical one; gctoy never uses it for patch bytes.
    assert assemble("nop word ptr [rax + rax]") != nops(5)
    with pytest.raises(AssemblerError):
        nops(-1)


def test_emu_asm_untrusted_agrees_with_in_process() -> None:
    text = "push rbp\nmov rbp, rsp\npop rbp\nret"
    assert assemble_untrusted(text, timeout=30) == assemble(text)
    with pytest.raises(AssemblerError, match="keystone rejected"):
        assemble_untrusted("frobnicate", timeout=30)


def _children() -> set[int]:
    """Process ids of this process's live children (from /proc)."""
    me, found = os.getpid(), set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == me and fields[0] != "Z":
            found.add(int(stat.parent.name))
    return found


def test_emu_asm_untrusted_hanging_input_times_out_cleanly() -> None:
    # Keystone issue 494: this text makes ks_asm loop forever. The child is stopped, not left behind.
    before = _children()
    with pytest.raises(AssemblerError, match="did not finish within 3 s"):
        assemble_untrusted("\\x41\\x4a", timeout=3.0)
    assert _children() <= before
