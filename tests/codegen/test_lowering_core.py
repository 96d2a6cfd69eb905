"""The instruction selection both x86 lowerings share (lowering_core.py): one walk, two target descriptions.

The same IR goes through both code generators; the shared selection must give each target its own
registers and word size: x86-64 moves a whole i64 in rax, x86-32 in the pair edx:eax, and the
messages name the target."""

from __future__ import annotations

import pytest

from gctoy.codegen.frame import CodegenError
from gctoy.codegen.lowering64 import X86_64_TARGET, FunctionLowering
from gctoy.codegen.lowering_core import LoweringCore, words
from gctoy.codegen.x86_32 import X86_32_TARGET, compile_module32, lower_function
from gctoy.codegen.x86_64 import compile_module
from gctoy.ir import parse_module

PROGRAM = """
@g = global [4 x i64] zeroinitializer

define i64 @f(i64* %p, i8* %b, i32 %k, i1 %c) {
entry:
  %x = load i64, i64* %p
  %y = load i8, i8* %b
  %e = getelementptr [4 x i64], [4 x i64]* @g, i64 0, i32 %k
  store i64 %x, i64* %e
  %s = select i1 %c, i64 %x, i64 7
  switch i32 %k, label %other [ i32 3, label %three ]
three:
  ret i64 %s
other:
  %z = zext i8 %y to i64
  ret i64 %z
}
"""


def _body(asm: str) -> list[str]:
    return [line.strip() for line in asm.splitlines()]


def test_both_lowerings_are_the_core_over_a_target_description():
    assert issubclass(FunctionLowering, LoweringCore)
    assert (X86_64_TARGET.word, X86_32_TARGET.word) == (8, 4)
    assert words(X86_64_TARGET.first) == ("rax",)
    assert words(X86_32_TARGET.first) == ("eax", "edx")
    lowering = lower_function(next(f for f in parse_module(PROGRAM).functions if f.name == "f"))
    assert isinstance(lowering, LoweringCore) and lowering.target is X86_32_TARGET


def test_loads_and_stores_move_a_word_at_a_time():
    asm64 = _body(compile_module(parse_module(PROGRAM), regalloc=False).asm_text)  # the core's own selection
    asm32 = _body(compile_module32(parse_module(PROGRAM)).asm_text)
    # i64: one qword on x86-64, two dwords (low at +0, high at +4) on x86-32
    assert "mov rax, qword ptr [rcx]" in asm64 and "mov qword ptr [rcx], rax" in asm64
    assert "mov eax, dword ptr [esi]" in asm32 and "mov edx, dword ptr [esi + 4]" in asm32
    assert "mov dword ptr [esi], eax" in asm32 and "mov dword ptr [esi + 4], edx" in asm32
    # i8: zero-extended into the first register; x86-32 clears the high dword
    assert "movzx eax, byte ptr [rcx]" in asm64
    k = asm32.index("movzx eax, byte ptr [esi]")
    assert asm32[k + 1] == "xor edx, edx"


def test_select_moves_each_word_and_switch_compares_each_word():
    asm64 = _body(compile_module(parse_module(PROGRAM), regalloc=False).asm_text)  # the core's own selection
    asm32 = _body(compile_module32(parse_module(PROGRAM)).asm_text)
    assert asm64.count("cmove rax, rcx") == 1
    k = asm32.index("cmove eax, ecx")
    assert asm32[k + 1] == "cmove edx, ebx"
    assert "cmp rax, 3" in asm64
    k = asm32.index("cmp eax, 3")
    assert asm32[k + 1].startswith("jne ") and asm32[k + 2] == "cmp edx, 0"


@pytest.mark.parametrize("compile_", [compile_module, compile_module32], ids=["x86-64", "x86-32"])
def test_an_unsupported_intrinsic_names_its_target(compile_):
    module = parse_module("declare void @llvm.donothing()\ndefine i64 @f() {\n  call void @llvm.donothing()\n"
                          "  ret i64 0\n}\n")
    name = "x86-64" if compile_ is compile_module else "x86-32"
    with pytest.raises(CodegenError, match=f"intrinsic @llvm.donothing is not supported by the {name} code generator"):
        compile_(module)
