"""Programs without GC compiled by gctoy.codegen and run on the Unicorn Machine, checked against LLVM 14's lli."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from codegen_programs import PROGRAMS  # noqa: E402
from gctoy.codegen import CodegenError, compile, compile_module  # noqa: E402
from gctoy.emu import Machine  # noqa: E402
from gctoy.llvm_tools import find_lli  # noqa: E402
from gctoy.ir import parse_module  # noqa: E402
from oracles import LLI14, skip_missing  # noqa: E402

LLI_SHIM = """
@.gctoy_fmt = private constant [6 x i8] c"%lld\\0A\\00"
@.gctoy_result = private constant [13 x i8] c"result %lld\\0A\\00"
declare i32 @printf(i8*, ...)

define void @print_i64(i64 %v) {
  %f = getelementptr [6 x i8], [6 x i8]* @.gctoy_fmt, i64 0, i64 0
  call i32 (i8*, ...) @printf(i8* %f, i64 %v)
  ret void
}

define i32 @main() {
  %r = call i64 @gctoy_main()
  %f = getelementptr [13 x i8], [13 x i8]* @.gctoy_result, i64 0, i64 0
  call i32 (i8*, ...) @printf(i8* %f, i64 %r)
  ret i32 0
}
"""


def _lli_path() -> str:
    """LLVM 14's lli (an unversioned lli of another release does not count)."""
    path, reason = find_lli(14)
    if path is None:
        skip_missing(LLI14, reason)
    return str(path)


def run_with_lli(text: str) -> list[str]:
    """The lines the program prints under lli, then `result N`."""
    shimmed = text.replace("declare void @print_i64(i64)", "").replace("@main()", "@gctoy_main()") + LLI_SHIM
    proc = subprocess.run([_lli_path()], input=shimmed, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.splitlines()


def run_with_gctoy(text: str) -> list[str]:
    """The lines the program prints when compiled by gctoy and run on the Machine, then `result N`."""
    machine = Machine(compile(parse_module(text)))
    out: list[str] = []
    machine.register_native("print_i64", lambda v: out.append(str(v)))
    result = machine.signed(machine.call("main", max_instructions=5_000_000))
    return out + [f"result {result}"]


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_program_output_equals_lli(name: str) -> None:
    text = PROGRAMS[name]
    assert run_with_gctoy(text) == run_with_lli(text)


def test_recursion_values_are_known() -> None:
    out = run_with_gctoy(PROGRAMS["recursion"])
    assert out[:2] == [str(2432902008176640000), "610"]


def test_program_without_statepoints_has_no_stackmap_section() -> None:
    compiled = compile_module(parse_module(PROGRAMS["loop_phis"]))
    assert compiled.stackmap.records == ()
    assert ".llvm_stackmaps" not in compiled.image.sections


def test_natives_are_the_called_declarations_only() -> None:
    text = PROGRAMS["arithmetic"] + "declare void @never_called(i64)\n"
    compiled = compile_module(parse_module(text))
    assert compiled.natives == ("print_i64",)
    assert set(f.name for f in compiled.functions) == {"main"}


def test_functions_are_symbols_of_the_image() -> None:
    compiled = compile_module(parse_module(PROGRAMS["recursion"]))
    for fn in compiled.functions:
        assert compiled.image.address_of(fn.name) == fn.address


def test_stack_is_16_byte_aligned_at_native_calls() -> None:
    machine = Machine(compile(parse_module(PROGRAMS["many_args"])))
    seen: list[int] = []
    # At the stub's int3 the return address has been pushed: rsp + 8 is the caller's rsp.
    machine.register_native("print_i64", lambda v: seen.append((machine.sp + 8) % 16))
    machine.call("main")
    assert seen == [0]


def test_unsupported_instruction_is_a_codegen_error() -> None:
    text = """
define i64 @main() {
entry:
  %x = frem double 1.0, 2.0
  ret i64 0
}
"""
    with pytest.raises(CodegenError):
        compile(parse_module(text))


def test_variable_sized_alloca_is_a_codegen_error() -> None:
    text = """
define i64 @main(i64 %n) {
entry:
  %a = alloca i64, i64 %n
  ret i64 0
}
"""
    with pytest.raises(CodegenError, match="variable element count"):
        compile(parse_module(text))
