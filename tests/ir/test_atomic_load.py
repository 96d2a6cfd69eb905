"""``load atomic`` is read and printed as LLVM reads and prints it, and refused as LLVM refuses it."""

from __future__ import annotations

import pytest

from gctoy.errors import IRParseError
from gctoy.ir import parse_module, print_module
from gctoy.llvm_tools import run_opt

TYPED = """define i32 @f(i32 addrspace(1)* %p, i8* %q) {
entry:
  %a = load atomic i32, i32 addrspace(1)* %p unordered, align 4
  %b = load atomic volatile i8, i8* %q syncscope("singlethread") acquire, align 1
  %c = load atomic i32, i32 addrspace(1)* %p seq_cst, align 4
  %m = load atomic i32, i32 addrspace(1)* %p monotonic, align 8
  %d = zext i8 %b to i32
  %e = add i32 %a, %d
  %g = add i32 %e, %c
  %h = add i32 %g, %m
  ret i32 %h
}
"""


def _body(text: str) -> list[str]:
    return [line for line in text.splitlines() if line and not line.startswith(("; ModuleID", "source_filename"))]


@pytest.mark.parametrize("version", [14, 19])
def test_atomic_loads_print_as_llvm_prints_them(request, version):
    llvm = request.getfixturevalue(f"llvm{version}")
    text = TYPED if version == 14 else print_module(parse_module(TYPED, "t.ll"), opaque=True)
    r = run_opt(llvm.opt, ["-S", "-passes=verify"], text)
    assert r.returncode == 0, r.stderr
    ours = print_module(parse_module(text, "t.ll"), opaque=version >= 15)
    assert "load atomic volatile i8" in ours and 'syncscope("singlethread") acquire, align 1' in ours
    assert _body(ours) == _body(r.stdout)


@pytest.mark.parametrize(
    "tail, message",
    [
        ("unordered", "atomic load must have explicit non-zero alignment"),
        ("release, align 4", "atomic load cannot use Release ordering"),
        ("acq_rel, align 4", "atomic load cannot use Release ordering"),
    ],
)
def test_bad_atomic_loads_are_refused_where_llvm_refuses_them(llvm14, tail, message):
    text = f"define i32 @f(i32* %p) {{\n  %a = load atomic i32, i32* %p {tail}\n  ret i32 %a\n}}\n"
    r = run_opt(llvm14.opt, ["-S"], text)
    assert r.returncode != 0 and f"2:25: error: {message}" in r.stderr
    with pytest.raises(IRParseError) as e:
        parse_module(text, "bad.ll")
    assert "2:25" in str(e.value) and message in str(e.value)
