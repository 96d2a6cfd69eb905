"""Differential: our `format_stackmap(parse(section))` against real `llvm-readobj --stackmap` (LLVM 14)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from gctoy.llvm_tools import run_tool  # noqa: E402
from stackmap_corpus import build_object, cases  # noqa: E402

from gctoy.stackmap import emit, format_file_header, format_stackmap, parse, read_object  # noqa: E402

CASES = cases()


def test_corpus_is_large_enough():
    """The comparison covers at least 30 objects."""
    assert len(CASES) >= 30


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_readobj_text_matches_llvm14(llvm14, case, tmp_path, monkeypatch):
    """Byte-for-byte the same text as `llvm-readobj --stackmap`, and the section re-emits exactly."""
    obj = build_object(llvm14, case, tmp_path)
    monkeypatch.chdir(tmp_path)
    expected = run_tool(llvm14.llvm_readobj, ["--stackmap", obj.name])
    assert expected.returncode == 0, expected.stderr
    found = read_object(obj.read_bytes())
    stackmap = parse(found.section)
    ours = format_file_header(obj.name, found.file_format, found.arch, found.address_size) + format_stackmap(stackmap)
    assert ours == expected.stdout
    assert emit(stackmap) == found.section
    assert all(fn.address == 0 for fn in stackmap.functions)
