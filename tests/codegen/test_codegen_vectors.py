"""gctoy llc and a vector of GC pointers live across a statepoint: one clear error, never wrong code.

gctoy's x86-64 code generator gives every value one 8-byte slot, so it cannot record a
relocated vector's lanes; it says so at the statepoint's line and column (or at the call
RS4GC turned into it), and exits 1.
"""
from __future__ import annotations

import pytest

from gctoy.cli import main
from gctoy.codegen import compile
from gctoy.codegen.frame import CodegenError
from gctoy.ir import parse_module

MESSAGE = "vector of GC pointers live across a statepoint is not supported by gctoy llc"

REWRITTEN = """declare void @foo()
declare token @llvm.experimental.gc.statepoint.p0f_isVoidf(i64 immarg, i32 immarg, void ()*, i32 immarg, i32 immarg, ...)
declare <2 x i8 addrspace(1)*> @llvm.experimental.gc.relocate.v2p1i8(token, i32 immarg, i32 immarg)

define <2 x i8 addrspace(1)*> @f(<2 x i8 addrspace(1)*> %v) gc "statepoint-example" {
entry:
  %t = call token (i64, i32, void ()*, i32, i32, ...) @llvm.experimental.gc.statepoint.p0f_isVoidf(i64 0, i32 0, void ()* @foo, i32 0, i32 0, i32 0, i32 0) [ "gc-live"(<2 x i8 addrspace(1)*> %v) ]
  %r = call coldcc <2 x i8 addrspace(1)*> @llvm.experimental.gc.relocate.v2p1i8(token %t, i32 0, i32 0)
  ret <2 x i8 addrspace(1)*> %r
}
"""

ABSTRACT = """declare void @foo()

define i8 addrspace(1)* @f(i8 addrspace(1)* %p) gc "statepoint-example" {
entry:
  %v = insertelement <2 x i8 addrspace(1)*> undef, i8 addrspace(1)* %p, i32 0
  call void @foo()
  %e = extractelement <2 x i8 addrspace(1)*> %v, i32 0
  ret i8 addrspace(1)* %e
}
"""


@pytest.mark.parametrize("text, where", [(REWRITTEN, "7:8"), (ABSTRACT, "6:3")], ids=["statepoint", "call"])
def test_llc_refuses_at_the_statepoint(tmp_path, capsys, text, where):
    src = tmp_path / "vec.ll"
    src.write_text(text)
    assert main(["llc", str(src), "-o", str(tmp_path / "vec.s")]) == 1
    err = capsys.readouterr().err.strip()
    assert err == f"{src}:{where}: error: {MESSAGE}"
    assert not (tmp_path / "vec.s").exists()


def test_compile_raises_a_codegen_error():
    with pytest.raises(CodegenError) as e:
        compile(parse_module(REWRITTEN, "vec.ll"))
    assert str(e.value) == f"vec.ll:7:8: error: {MESSAGE}"
