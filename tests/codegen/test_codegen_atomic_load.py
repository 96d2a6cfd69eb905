"""An atomic load compiles to one move, never folded away or split into pieces that could tear."""

from __future__ import annotations

import pytest

from gctoy.codegen.frame import CodegenError
from gctoy.codegen.x86_32 import compile_module32
from gctoy.codegen.x86_64 import compile_module
from gctoy.ir import parse_module

ONE_WORD = """
define i32 @get(i32* %p, i32 %x) {
entry:
  %v = load atomic i32, i32* %p acquire, align 4
  %s = add i32 %v, %x
  ret i32 %s
}
"""


def _wide(ty: str, align: int) -> str:
    return f"""
define {ty} @get({ty}* %p) {{
entry:
  %v = load atomic {ty}, {ty}* %p seq_cst, align {align}
  ret {ty} %v
}}
"""


@pytest.mark.parametrize("regalloc", [True, False])
def test_an_atomic_word_load_compiles_on_x86_64(regalloc):
    compiled = compile_module(parse_module(ONE_WORD, "a.ll"), regalloc=regalloc)
    assert compiled is not None


def test_an_atomic_word_load_compiles_on_x86_32():
    assert compile_module32(parse_module(ONE_WORD, "a.ll"), frame="ebp") is not None


def test_an_atomic_load_wider_than_a_register_is_refused_on_x86_32():
    with pytest.raises(CodegenError, match="atomic load of i64"):
        compile_module32(parse_module(_wide("i64", 8), "w.ll"), frame="ebp")


def test_an_atomic_load_wider_than_a_register_is_refused_on_x86_64():
    with pytest.raises(CodegenError, match="atomic load of i128"):
        compile_module(parse_module(_wide("i128", 16), "w.ll"))


def test_atomicrmw_is_refused_by_name():
    text = "define i32 @f(i32* %c) {\nentry:\n  %r = atomicrmw add i32* %c, i32 1 seq_cst\n  ret i32 %r\n}\n"
    with pytest.raises(CodegenError, match="'atomicrmw' is not supported"):
        compile_module(parse_module(text, "r.ll"))
