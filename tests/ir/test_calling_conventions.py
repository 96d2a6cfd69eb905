"""Numbered calling conventions are read in both spellings and printed as LLVM prints them."""

from __future__ import annotations

import pytest

from gctoy.errors import IRParseError
from gctoy.ir import parse_module, print_module
from gctoy.llvm_tools import run_opt

NUMBERED = """declare cc 42 void @spaced()
declare cc42 void @joined()
declare cc 9 void @named()

define void @caller() {
  call cc 42 void @spaced()
  call cc42 void @joined()
  call cc9 void @named()
  ret void
}
"""


def _body(text: str) -> list[str]:
    return [line for line in text.splitlines() if line and not line.startswith(("; ModuleID", "source_filename"))]


@pytest.mark.parametrize("version", [14, 19])
def test_numbered_conventions_print_as_llvm_prints_them(request, version):
    llvm = request.getfixturevalue(f"llvm{version}")
    r = run_opt(llvm.opt, ["-S", "-passes=verify"], NUMBERED)
    assert r.returncode == 0, r.stderr
    ours = print_module(parse_module(NUMBERED, "cc.ll"), opaque=llvm.version >= 15)
    assert "call cc42 void @joined()" in ours and "coldcc void @named" in ours
    assert _body(ours) == _body(r.stdout)


def test_cc_without_a_number_is_one_clear_error():
    with pytest.raises(IRParseError) as e:
        parse_module("declare cc void @f()\n", "bad.ll")
    assert "1:" in str(e.value) and "calling convention number" in str(e.value)
