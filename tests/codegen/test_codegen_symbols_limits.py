"""Assembler spellings of IR names (codegen/symbols.py), the data layout (codegen/data.py) and the size
limits (codegen/limits.py), on both targets."""
from __future__ import annotations

import capstone.x86_const as x86
import pytest
from broken_modules import CASES as BROKEN
from hypothesis import given
from hypothesis import strategies as st

from gctoy.codegen import CodegenError, compile_module, compile_module32
from gctoy.codegen.limits import MAX_DATA_BYTES, MAX_FRAME_BYTES, MAX_PATCH_BYTES
from gctoy.codegen.symbols import MANGLE_PREFIX, demangle, is_plain, mangle
from gctoy.errors import GCToyError, VerifyError
from gctoy.ir import parse_module
from gctoy.ir.names import quote_name
from gctoy.runtime.run import run_module
from gctoy.runtime.run32 import run_module32

REGISTERS = sorted({k[len("X86_REG_"):].lower() for k in dir(x86) if k.startswith("X86_REG_")} - {"invalid", "ending"})
KEYWORDS = ["byte", "word", "dword", "qword", "tbyte", "xmmword", "ptr", "offset", "flat", "short", "near", "far",
            "and", "or", "not", "shl", "mod", "rel", "flags"]
OTHER = [".str", "meta.node", "a b", "x-y", "$d", "1st", "__gctoy_i64_sdiv", "__tls_block", "__gcmap_main",
         "__LLVM_StackMaps", f"{MANGLE_PREFIX}rax", "é", 'q"uote', "back\\slash"]


@pytest.mark.parametrize("name", ["main", "f", "gc_alloc", "print_i64", "__gc_main", "llvm_gc_root_chain", "p0_main",
                                  "raxx", "bytes", "Main_2"])
def test_plain_names_are_written_as_they_are(name):
    assert is_plain(name)
    assert mangle(name) == name
    assert demangle(name) is None


@pytest.mark.parametrize("name", REGISTERS + [r.upper() for r in REGISTERS[:40]] + KEYWORDS + OTHER)
def test_other_names_are_mangled_into_plain_labels(name):
    label = mangle(name)
    assert label.startswith(MANGLE_PREFIX)
    assert label.replace("_", "a").isalnum() and label.isascii()
    assert demangle(label) == name


@given(st.text(min_size=1, max_size=20))
def test_mangling_is_one_to_one(name):
    label = mangle(name)
    assert (demangle(label) if label != name else name) == name
    assert "." not in label or label == name


def many_names_module(names: list[str]) -> tuple[str, int]:
    """A module with one function per name returning its index, and a main adding index * k of each call."""
    parts, calls, expected = [], [], 0
    for k, name in enumerate(names):
        q = quote_name(name)
        parts.append(f"define i64 @{q}() {{\nentry:\n  ret i64 {k + 1}\n}}\n")
        parts.append(f"@{quote_name('g.' + name)} = global i64 {k + 1}\n")
    body = ["  %acc0 = add i64 0, 0"]
    for k, name in enumerate(names):
        body.append(f"  %c{k} = call i64 @{quote_name(name)}()")
        body.append(f"  %l{k} = load i64, i64* @{quote_name('g.' + name)}")
        body.append(f"  %s{k} = add i64 %c{k}, %l{k}")
        body.append(f"  %m{k} = mul i64 %s{k}, {k + 3}")
        body.append(f"  %acc{k + 1} = add i64 %acc{k}, %m{k}")
        expected += 2 * (k + 1) * (k + 3)
    parts.append("define i64 @main() {\nentry:\n" + "\n".join(body) + f"\n  ret i64 %acc{len(names)}\n}}\n")
    calls.append(expected)
    return "".join(parts), expected


NAMES = REGISTERS + KEYWORDS + [n for n in OTHER if n != "__gctoy_i64_sdiv"]


@pytest.mark.parametrize("target", ["x86-64", "x86-32"])
def test_functions_and_globals_named_like_registers_run_correctly(target):
    text, expected = many_names_module(NAMES)
    module = parse_module(text, "names.ll")
    result = run_module(module, gc="none") if target == "x86-64" else run_module32(module)
    assert result.result == expected


@pytest.mark.parametrize("target", ["x86-64", "x86-32"])
def test_the_image_names_functions_and_globals_by_their_ir_names(target):
    text, _ = many_names_module(["rax", ".str", "a b"])
    module = parse_module(text, "names.ll")
    compiled = compile_module(module) if target == "x86-64" else compile_module32(module)
    symbols = compiled.image.symbols
    for name in ("rax", ".str", "a b", "g.rax", "g..str", "g.a b", "main"):
        assert name in symbols
    assert not any(s.startswith(MANGLE_PREFIX) and "." not in s for s in symbols)
    assert {f.name for f in compiled.functions} == {"rax", ".str", "a b", "main"}


def test_an_ir_name_that_spells_an_internal_label_is_an_error():
    text = '@"main.bb0" = global i64 1\ndefine i64 @main() {\nentry:\n  ret i64 0\n}\n'
    with pytest.raises(CodegenError, match="label"):
        compile_module(parse_module(text))


def test_a_helper_name_is_refused_on_x86_32():
    text = "declare i64 @__gctoy_i64_sdiv(i64, i64)\ndefine i64 @main() {\nentry:\n  ret i64 0\n}\n"
    with pytest.raises(CodegenError, match="runtime helper"):
        compile_module32(parse_module(text))


# --------------------------------------------------------------------------- data

def test_long_zero_runs_become_zero_directives():
    text = ("@z = global [1000 x i64] zeroinitializer\n@m = global [20 x i64] [" +
            ", ".join(f"i64 {v}" for v in [1] + [0] * 18 + [2]) + "]\n"
            "define i64 @main() {\nentry:\n  ret i64 0\n}\n")
    compiled = compile_module(parse_module(text))
    assert ".zero 8000" in compiled.data_text
    assert ".zero 151" in compiled.data_text  # the high bytes of 1, then the 18 zero fields before 2
    image = compiled.image
    m = image.symbols["m"] - image.data_base
    assert image.data[m:m + 8] == (1).to_bytes(8, "little")
    assert image.data[m + 152:m + 160] == (2).to_bytes(8, "little")


def test_globals_over_the_data_limit_are_refused_before_layout():
    count = MAX_DATA_BYTES // 8 + 1
    text = f"@g = global [{count} x i64] zeroinitializer\ndefine i64 @main() {{\nentry:\n  ret i64 0\n}}\n"
    for compile_ in (compile_module, compile_module32):
        with pytest.raises(CodegenError, match="does not fit"):
            compile_(parse_module(text))


def test_globals_at_the_data_limit_fit():
    count = MAX_DATA_BYTES // 8
    text = f"@g = global [{count} x i64] zeroinitializer\ndefine i64 @main() {{\nentry:\n  ret i64 0\n}}\n"
    assert len(compile_module(parse_module(text)).image.data) == MAX_DATA_BYTES


def test_external_globals_take_no_room_until_used():
    text = "@G = external global i32\n@H = global i32 5\ndefine i64 @main() {\nentry:\n  ret i64 0\n}\n"
    compiled = compile_module(parse_module(text))
    assert "G" not in compiled.image.symbols and "H" in compiled.image.symbols
    used = text.replace("  ret i64 0", "  %v = load i32, i32* @G\n  ret i64 0")
    for compile_ in (compile_module, compile_module32):
        with pytest.raises(CodegenError, match="external global @G is used") as info:
            compile_(parse_module(used, "ext.ll"))
        assert isinstance(info.value, VerifyError) and info.value.location == "ext.ll:5:8"


# --------------------------------------------------------------------------- frames and patch bytes

@pytest.mark.parametrize("ty, count", [("i64", 1 << 40), ("i8 addrspace(1)*", 100_000_000), ("i8", -1),
                                       ("[200000 x i64]", 1)])
def test_allocas_over_the_frame_limit_are_refused(ty, count):
    text = f"define i64 @main() {{\nentry:\n  %a = alloca {ty}, i64 {count}\n  ret i64 0\n}}\n"
    for compile_ in (compile_module, compile_module32):
        with pytest.raises(CodegenError, match="frame limit"):
            compile_(parse_module(text, "a.ll"))


def test_an_alloca_at_the_frame_limit_fits():
    count = MAX_FRAME_BYTES // 8 - 64  # room left for the function's own slots
    text = f"define i64 @main() {{\nentry:\n  %a = alloca i64, i64 {count}\n  ret i64 0\n}}\n"
    assert compile_module(parse_module(text)).functions[0].frame.size <= MAX_FRAME_BYTES
    assert compile_module32(parse_module(text)).functions[0].frame.size <= MAX_FRAME_BYTES


def test_many_allocas_together_over_the_frame_limit_are_refused():
    allocas = "\n".join(f"  %a{k} = alloca i64, i64 {MAX_FRAME_BYTES // 16}" for k in range(3))
    text = f"define i64 @main() {{\nentry:\n{allocas}\n  ret i64 0\n}}\n"
    for compile_ in (compile_module, compile_module32):
        with pytest.raises(CodegenError, match="the frame of @main"):
            compile_(parse_module(text))


def test_an_empty_type_alloca_of_any_count_is_quick():
    text = "define i64 @main() {\nentry:\n  %a = alloca {}, i64 1000000000000\n  ret i64 0\n}\n"
    compile_module32(parse_module(text))
    compile_module(parse_module(text))


STATEPOINT = """
declare token @llvm.experimental.gc.statepoint.p0f_isVoidf(i64, i32, void ()*, i32, i32, ...)
define void @g() {
entry:
  ret void
}
define i64 @main() gc "statepoint-example" {
entry:
  %t = call token (i64, i32, void ()*, i32, i32, ...) @llvm.experimental.gc.statepoint.p0f_isVoidf(i64 0, i32 PATCH, void ()* @g, i32 0, i32 0, i32 0, i32 0)
  ret i64 0
}
"""


def test_patch_bytes_over_the_limit_are_refused_with_the_statepoint_line():
    with pytest.raises(CodegenError, match=f"at most {MAX_PATCH_BYTES}") as info:
        compile_module(parse_module(STATEPOINT.replace("PATCH", str(MAX_PATCH_BYTES + 1)), "p.ll"))
    assert "p.ll:9:" in str(info.value)


def test_patch_bytes_at_the_limit_become_nops():
    compiled = compile_module(parse_module(STATEPOINT.replace("PATCH", str(MAX_PATCH_BYTES))))
    main = compiled.image.symbols["main"]
    record = compiled.stackmap.records[0]
    assert record.instruction_offset >= MAX_PATCH_BYTES
    assert main < compiled.image.symbols["main.sp0"]


def test_x86_32_gc_pointer_allocas_are_limited():
    from gctoy.codegen.limits import MAX_GC_ALLOCA_FIELDS_X86_32

    def module(count: int) -> str:
        return (f"define i64 @main() {{\nentry:\n  %a = alloca i8 addrspace(1)*, i64 {count}\n"
                f"  %b = alloca [2 x i8 addrspace(1)*]\n  ret i64 0\n}}\n")

    ok = compile_module32(parse_module(module(MAX_GC_ALLOCA_FIELDS_X86_32 - 2)))
    assert len(ok.functions[0].frame.gc_alloca_fields) == MAX_GC_ALLOCA_FIELDS_X86_32
    with pytest.raises(CodegenError, match=f"at most {MAX_GC_ALLOCA_FIELDS_X86_32}"):
        compile_module32(parse_module(module(MAX_GC_ALLOCA_FIELDS_X86_32 - 1)))


def test_a_constant_address_beyond_32_bits_of_offset_is_computed_exactly():
    text = """@g = global [4 x i64] zeroinitializer
define i64 @main() {
entry:
  %r = getelementptr i64, i64* getelementptr ([4 x i64], [4 x i64]* @g, i64 0, i64 1099511627776), i64 1
  %s = ptrtoint i64* %r to i64
  ret i64 %s
}
"""
    module = parse_module(text)
    g = compile_module(module).image.symbols["g"]
    assert run_module(parse_module(text), gc="none").result == g + 8 * (1 << 40) + 8
    assert run_module32(parse_module(text)).result == (g + 8 * (1 << 40) + 8) % (1 << 32)


@pytest.mark.parametrize("regalloc", [True, False], ids=["registers", "slots"])
@pytest.mark.parametrize("name", sorted(BROKEN))
def test_modules_the_verifier_refuses_give_codegen_errors_or_code_never_a_crash(name, regalloc):
    """compile_module without the verifier in front: a module LLVM's verifier refuses (a token phi, a
    self-reference...) is either lowered or refused with a CodegenError, never a bare Python exception."""
    try:
        module = parse_module(BROKEN[name][0])
    except GCToyError:
        return
    try:
        compile_module(module, regalloc=regalloc)
    except GCToyError as e:
        assert str(e) and "Traceback" not in str(e)
