"""Reading `.llvm_stackmaps` from ELF objects, errors for files without one, and `gctoy readobj`."""

from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from gctoy.llvm_tools import run_tool  # noqa: E402
from stackmap_corpus import HEADER, INTRINSIC_CASES, Case, build_object, rs4gc_module  # noqa: E402

from gctoy.cli import main  # noqa: E402
from gctoy.errors import DecodeError, GCToyError  # noqa: E402
from gctoy.stackmap import (  # noqa: E402
    MissingStackMapError,
    emit,
    parse,
    read_object,
    read_stackmap,
    read_stackmap_section,
)

NO_STACKMAP = HEADER + "\ndefine i64 @plain(i64 %x) {\n  %y = add i64 %x, 1\n  ret i64 %y\n}\n"


def test_not_elf_is_a_decode_error(tmp_path):
    """A file that is not ELF is reported at offset 0."""
    path = tmp_path / "text.o"
    path.write_text("hello")
    with pytest.raises(DecodeError) as info:
        read_stackmap(path)
    assert info.value.offset == 0


def test_object_without_stackmap(llvm14, tmp_path):
    """An object with no records has no section: MissingStackMapError (a GCToyError)."""
    obj = build_object(llvm14, Case("plain", NO_STACKMAP, False), tmp_path)
    found = read_object(obj.read_bytes())
    assert found.section is None and found.file_format == "elf64-x86-64"
    with pytest.raises(MissingStackMapError):
        read_stackmap_section(obj)
    with pytest.raises(GCToyError):
        read_stackmap(obj)


def test_corrupted_objects_only_raise_gctoy_errors(llvm14, tmp_path):
    """Flipping bytes all over a real object gives a stack map or a GCToyError, never another exception."""
    obj = build_object(llvm14, Case("rs", rs4gc_module(5), True), tmp_path)
    good = obj.read_bytes()
    assert emit(read_stackmap(obj)) == read_stackmap_section(obj)
    rng = random.Random(7)
    for _ in range(1500):
        data = bytearray(good)
        for _ in range(rng.randint(1, 6)):
            data[rng.randrange(len(data))] = rng.randrange(256)
        if rng.random() < 0.2:
            data = data[:rng.randrange(len(data))]
        try:
            read_object(bytes(data)).stackmap()
        except GCToyError:
            pass


def test_cli_matches_llvm_readobj(llvm14, tmp_path, monkeypatch, capsys):
    """`gctoy readobj --stackmap A B` prints what `llvm-readobj --stackmap A B` prints."""
    a = build_object(llvm14, Case("a", HEADER + INTRINSIC_CASES["stackmap_kinds"], False), tmp_path)
    b = build_object(llvm14, Case("b", rs4gc_module(11), True, ("-max-registers-for-gc-values=2",)), tmp_path)
    monkeypatch.chdir(tmp_path)
    expected = run_tool(llvm14.llvm_readobj, ["--stackmap", a.name, b.name]).stdout
    assert main(["readobj", "--stackmap", a.name, b.name]) == 0
    assert capsys.readouterr().out == expected


def test_cli_without_section_prints_the_header_like_llvm(llvm14, tmp_path, monkeypatch, capsys):
    """No section: the same stdout as llvm-readobj (just the file header) and a warning on stderr."""
    obj = build_object(llvm14, Case("plain", NO_STACKMAP, False), tmp_path)
    monkeypatch.chdir(tmp_path)
    expected = run_tool(llvm14.llvm_readobj, ["--stackmap", obj.name]).stdout
    assert main(["readobj", "--stackmap", obj.name]) == 0
    captured = capsys.readouterr()
    assert captured.out == expected
    assert "no .llvm_stackmaps section" in captured.err


def test_cli_bad_input_is_an_error_line(tmp_path, capsys):
    """A non-ELF file or a missing one: `file: error: ...` on stderr, exit status 1, no traceback."""
    junk = tmp_path / "junk.o"
    junk.write_bytes(b"\x7fELF" + bytes(10))
    assert main(["readobj", "--stackmap", str(junk), str(tmp_path / "missing.o")]) == 1
    err = capsys.readouterr().err
    assert f"{junk}: error: offset 0x0: malformed ELF file" in err
    assert "cannot read" in err and "Traceback" not in err


def test_parse_accepts_memoryview_and_bytearray():
    """Any bytes-like input is parsed the same way."""
    data = emit(parse(bytes([3]) + bytes(15)))
    assert parse(bytearray(data)) == parse(memoryview(data)) == parse(data)
