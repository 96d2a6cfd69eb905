"""Images: fixed layout, labels resolved by Keystone, sections, checks."""

from __future__ import annotations

import pytest

from gctoy.emu import CODE_BASE, DATA_BASE, SECTION_BASE, STUB_BASE, Image
from gctoy.errors import AssemblerError


def test_emu_image_symbols_from_keystone_labels() -> None:
    img = Image.from_assembly(
        "f:\n  nop\ng: ret\n", data_text="a: .quad 1\nb: .long 2, 3\n", natives=["print_i64", "poll"]
    )
    assert img.symbols == {
        "f": CODE_BASE, "g": CODE_BASE + 1, "a": DATA_BASE, "b": DATA_BASE + 8,
        "print_i64": STUB_BASE, "poll": STUB_BASE + 16,
    }
    assert img.code == b"\x90\xc3"
    assert img.data == (1).to_bytes(8, "little") + (2).to_bytes(4, "little") + (3).to_bytes(4, "little")


def test_emu_image_is_deterministic_and_sections_sorted() -> None:
    text = "main: mov eax, 1\nret"
    one = Image.from_assembly(text, sections={"zz": b"\x01" * 3, ".llvm_stackmaps": b"\x03\x00"})
    two = Image.from_assembly(text, sections={".llvm_stackmaps": b"\x03\x00", "zz": b"\x01" * 3})
    assert one == two
    assert one.section_addresses == {".llvm_stackmaps": SECTION_BASE, "zz": SECTION_BASE + 16}
    later = one.with_sections(extra=b"x")
    assert later.section_addresses == {".llvm_stackmaps": SECTION_BASE, "extra": SECTION_BASE + 16, "zz": SECTION_BASE + 32}
    assert "extra" not in one.sections


def test_emu_image_checks_the_code_it_assembles() -> None:
    with pytest.raises(AssemblerError, match="RIP-relative"):
        Image.from_assembly("main: mov dword ptr fs:[0x10], 1\nret")
    unchecked = Image.from_assembly("main: mov dword ptr fs:[0x10], 1\nret", check=False)
    assert unchecked.code.startswith(bytes.fromhex("64c705"))


def test_emu_image_rejects_clashing_names_and_bad_text() -> None:
    with pytest.raises(AssemblerError, match="both"):
        Image.from_assembly("ret", data_text="x: .quad 0", natives=["x"])
    with pytest.raises(AssemblerError):
        Image.from_assembly("main: frob", untrusted=True, timeout=30)


def test_emu_image_listing_has_labels() -> None:
    img = Image.from_assembly("main:\n  xor eax, eax\n  ret", arch="x86_32")
    assert img.listing().splitlines() == [
        "main:",
        "  00400000: 31 c0                          xor eax, eax",
        "  00400002: c3                             ret",
    ]
