"""Capstone disassembly and the listing format."""

from __future__ import annotations

from gctoy.emu import assemble, disassemble, format_listing

BASE = 0x400000


def test_emu_disasm_records_and_listing_are_deterministic() -> None:
    code = assemble("start: push rbp\nmov rbp, rsp\nxor eax, eax\npop rbp\nret")
    insns = disassemble(code, BASE)
    assert [i.address for i in insns] == [BASE, BASE + 1, BASE + 4, BASE + 6, BASE + 7]
    assert insns[1].bytes == bytes.fromhex("4889e5") and insns[1].size == 3
    listing = format_listing(code, BASE, symbols={"start": BASE})
    assert listing == format_listing(code, BASE, symbols={"start": BASE})
    assert listing.splitlines()[:3] == [
        "start:",
        "  00400000: 55                             push rbp",
        "  00400001: 48 89 e5                       mov rbp, rsp",
    ]


def test_emu_disasm_listing_shows_undecodable_bytes() -> None:
    listing = format_listing(b"\x90\x06\xc3", BASE, "x86_64")
    assert ".byte 0x06" in listing and listing.rstrip().endswith("ret")


def test_emu_disasm_32_bit_and_att() -> None:
    code = bytes.fromhex("8b442404c3")
    assert [i.text for i in disassemble(code, BASE, "x86_32")] == ["mov eax, dword ptr [esp + 4]", "ret"]
    assert disassemble(code, BASE, "x86_32", syntax="att")[0].text == "movl 4(%esp), %eax"
