"""The x86-32 code generator (JIT32 conventions): every instruction kind, i64 arithmetic on register
pairs against Python's wrapping semantics, both frame kinds, callee-popped stack arguments,
recursion, and generated runnable programs printing what the x86-64 pipeline prints."""

from __future__ import annotations

import re
from functools import lru_cache

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gctoy.codegen.frame import CodegenError
from gctoy.codegen.frame32 import place_arguments
from gctoy.codegen.x86_32 import compile_module32
from gctoy.emu import Machine, disassemble
from gctoy.ir import parse_module
from gctoy.ir.types import IntType, PointerType
from gctoy.passes import run as run_passes
from gctoy.runtime.run32 import Runtime32, Runtime32Error, call32, run_module32
from runnable_gen import generate_program, x86_64_reference

WIDTHS = (8, 16, 32, 64)
BINOPS = ("add", "sub", "mul", "and", "or", "xor", "shl", "lshr", "ashr", "sdiv", "udiv", "srem", "urem")
PREDICATES = ("eq", "ne", "ugt", "uge", "ult", "ule", "sgt", "sge", "slt", "sle")


def _u(v: int, bits: int) -> int:
    return v & ((1 << bits) - 1)


def _s(v: int, bits: int) -> int:
    v = _u(v, bits)
    return v - (1 << bits) if v >> (bits - 1) else v


def _trunc_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def py_binop(op: str, a: int, b: int, bits: int) -> int:
    """LLVM's result of ``op iN a, b`` (operands and result unsigned)."""
    sa, sb = _s(a, bits), _s(b, bits)
    r = {
        "add": lambda: a + b, "sub": lambda: a - b, "mul": lambda: a * b,
        "and": lambda: a & b, "or": lambda: a | b, "xor": lambda: a ^ b,
        "shl": lambda: a << b, "lshr": lambda: a >> b, "ashr": lambda: sa >> b,
        "sdiv": lambda: _trunc_div(sa, sb), "udiv": lambda: a // b,
        "srem": lambda: sa - _trunc_div(sa, sb) * sb, "urem": lambda: a % b,
    }[op]()
    return _u(r, bits)


def py_icmp(pred: str, a: int, b: int, bits: int) -> int:
    """LLVM's ``icmp pred iN a, b``."""
    if pred.startswith("s"):
        a, b = _s(a, bits), _s(b, bits)
    return int({"eq": a == b, "ne": a != b, "ugt": a > b, "uge": a >= b, "ult": a < b, "ule": a <= b,
                "sgt": a > b, "sge": a >= b, "slt": a < b, "sle": a <= b}[pred])


ARITH_IR = "\n".join(
    f"define i{w} @{op}{w}(i{w} %a, i{w} %b) {{\nentry:\n  %r = {op} i{w} %a, %b\n  ret i{w} %r\n}}"
    for w in WIDTHS for op in BINOPS
) + "\n" + "\n".join(
    f"define i1 @{p}{w}(i{w} %a, i{w} %b) {{\nentry:\n  %r = icmp {p} i{w} %a, %b\n  ret i1 %r\n}}"
    for w in WIDTHS for p in PREDICATES
)


@lru_cache(maxsize=None)
def arith_machine(frame: str) -> Machine:
    """One machine holding a function per (operation, width), shared by the property tests."""
    compiled = compile_module32(parse_module(ARITH_IR), frame=frame)
    return Runtime32(compiled).machine


def _run_binop(machine: Machine, name: str, bits: int, a: int, b: int, result_bits: int | None = None) -> int:
    ty = IntType(bits)
    rty = IntType(result_bits or bits)
    return call32(machine, name, [ty, ty], [a, b], rty)


values64 = st.one_of(st.integers(0, (1 << 64) - 1), st.sampled_from(
    [0, 1, 2, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 0x100000000, (1 << 63) - 1, 1 << 63, (1 << 64) - 1]))


@settings(max_examples=150, deadline=None)
@given(op=st.sampled_from(BINOPS), bits=st.sampled_from(WIDTHS), a=values64, b=values64,
       frame=st.sampled_from(("esp", "ebp")))
def test_binary_operations_wrap_like_llvm(op, bits, a, b, frame):
    a, b = _u(a, bits), _u(b, bits)
    if op in ("shl", "lshr", "ashr"):
        b %= bits  # larger counts are poison
    if op in ("sdiv", "udiv", "srem", "urem"):
        if b == 0 or (op in ("sdiv", "srem") and _s(a, bits) == -(1 << (bits - 1)) and _s(b, bits) == -1):
            b = 3  # division by zero and signed overflow are undefined
    got = _run_binop(arith_machine(frame), f"{op}{bits}", bits, a, b)
    assert got == py_binop(op, a, b, bits), (op, bits, hex(a), hex(b))


@pytest.mark.parametrize("count", [0, 1, 31, 32, 33, 63])
@pytest.mark.parametrize("op", ["shl", "lshr", "ashr"])
def test_i64_shift_counts_around_32(op, count):
    a = 0x8123_4567_89AB_CDEF
    assert _run_binop(arith_machine("esp"), f"{op}64", 64, a, count) == py_binop(op, a, count, 64)


@settings(max_examples=120, deadline=None)
@given(pred=st.sampled_from(PREDICATES), bits=st.sampled_from(WIDTHS), a=values64, b=values64, same_hi=st.booleans())
def test_compares_high_then_low_words(pred, bits, a, b, same_hi):
    a, b = _u(a, bits), _u(b, bits)
    if same_hi:  # equal high words: the low words (unsigned) decide, even for signed predicates
        b = (a & ~0xFFFFFFFF) | (b & 0xFFFFFFFF)
    got = call32(arith_machine("ebp"), f"{pred}{bits}", [IntType(bits)] * 2, [a, b], IntType(1))
    assert got == py_icmp(pred, a, b, bits)


def test_division_by_zero_is_a_runtime_error():
    with pytest.raises(Runtime32Error, match="division by zero"):
        _run_binop(arith_machine("esp"), "sdiv64", 64, 5, 0)


MISC_IR = """
%pair = type { i32, i64, i8 addrspace(1)* }
@table = global [4 x i16] [i16 1, i16 -2, i16 300, i16 -400]
@counter = global i64 5

define i64 @casts(i64 %x) {
entry:
  %t8 = trunc i64 %x to i8
  %s = sext i8 %t8 to i64
  %t16 = trunc i64 %x to i16
  %z = zext i16 %t16 to i64
  %t32 = trunc i64 %x to i32
  %s32 = sext i32 %t32 to i64
  %a = add i64 %s, %z
  %b = xor i64 %a, %s32
  ret i64 %b
}

define i64 @memory(i64 %v, i32 %k) {
entry:
  %p = alloca %pair
  %f0 = getelementptr %pair, %pair* %p, i32 0, i32 0
  %f1 = getelementptr %pair, %pair* %p, i32 0, i32 1
  %f2 = getelementptr %pair, %pair* %p, i32 0, i32 2
  store i32 %k, i32* %f0
  store i64 %v, i64* %f1
  store i8 addrspace(1)* null, i8 addrspace(1)** %f2
  %r0 = load i32, i32* %f0
  %r1 = load i64, i64* %f1
  %w = zext i32 %r0 to i64
  %e = getelementptr [4 x i16], [4 x i16]* @table, i32 0, i32 %k
  %h = load i16, i16* %e
  %hs = sext i16 %h to i64
  %c = load i64, i64* @counter
  %c1 = add i64 %c, 1
  store i64 %c1, i64* @counter
  %s1 = add i64 %r1, %w
  %s2 = mul i64 %s1, %hs
  %s3 = add i64 %s2, %c1
  ret i64 %s3
}

define i64 @choose(i64 %x) {
entry:
  switch i64 %x, label %other [ i64 0, label %zero
                                i64 4294967296, label %big
                                i64 -1, label %minus ]
zero:
  br label %join
big:
  br label %join
minus:
  br label %join
other:
  %neg = icmp slt i64 %x, 0
  %sel = select i1 %neg, i64 -100, i64 100
  br label %join
join:
  %r = phi i64 [ 10, %zero ], [ 20, %big ], [ 30, %minus ], [ %sel, %other ]
  ret i64 %r
}

define i64 @swap(i64 %n) {
entry:
  br label %loop
loop:
  %a = phi i64 [ 1, %entry ], [ %b, %loop ]
  %b = phi i64 [ 2, %entry ], [ %a, %loop ]
  %i = phi i64 [ 0, %entry ], [ %i1, %loop ]
  %i1 = add i64 %i, 1
  %more = icmp ult i64 %i1, %n
  br i1 %more, label %loop, label %done
done:
  %r = mul i64 %a, 10
  %r2 = add i64 %r, %b
  ret i64 %r2
}

define i64 @many(i32 %a, i64 %b, i8 addrspace(1)* %c, i32 %d, i64 %e, i16 %f) {
entry:
  %ci = ptrtoint i8 addrspace(1)* %c to i64
  %a64 = zext i32 %a to i64
  %d64 = zext i32 %d to i64
  %f64 = sext i16 %f to i64
  %x1 = mul i64 %a64, 1000000
  %x2 = add i64 %x1, %b
  %x3 = mul i64 %ci, 3
  %x4 = add i64 %x2, %x3
  %x5 = sub i64 %x4, %d64
  %x6 = mul i64 %e, 7
  %x7 = add i64 %x5, %x6
  %x8 = add i64 %x7, %f64
  ret i64 %x8
}

define i64 @call_many() {
entry:
  %p = inttoptr i64 1234 to i8 addrspace(1)*
  %r = call i64 @many(i32 5, i64 -9, i8 addrspace(1)* %p, i32 11, i64 4294967299, i16 -3)
  %r2 = call i64 @many(i32 1, i64 2, i8 addrspace(1)* null, i32 3, i64 4, i16 5)
  %s = add i64 %r, %r2
  ret i64 %s
}

define i64 @fib(i64 %n) {
entry:
  %small = icmp slt i64 %n, 2
  br i1 %small, label %base, label %rec
base:
  ret i64 %n
rec:
  %n1 = sub i64 %n, 1
  %n2 = sub i64 %n, 2
  %f1 = call i64 @fib(i64 %n1)
  %f2 = call i64 @fib(i64 %n2)
  %s = add i64 %f1, %f2
  ret i64 %s
}
"""
I64 = IntType(64)


@lru_cache(maxsize=None)
def misc_machine(frame: str) -> Machine:
    return Runtime32(compile_module32(parse_module(MISC_IR), frame=frame)).machine


def _py_casts(x: int) -> int:
    s = _s(x, 8)
    z = _u(x, 16)
    s32 = _s(x, 32)
    return _u((s + z) ^ s32, 64)


def _py_many(a, b, c, d, e, f):
    return _u(a * 1000000 + _s(b, 64) + c * 3 - d + _s(e, 64) * 7 + f, 64)


@pytest.mark.parametrize("frame", ["esp", "ebp"])
def test_hand_programs(frame):
    m = misc_machine(frame)
    for x in (0, 1, 0x80, 0x7FFF_FFFF, 0xFFFF_FFFF_FFFF_FF80, 0x1234_5678_9ABC_DEF0):
        assert call32(m, "casts", [I64], [x]) == _py_casts(x)
    table = [1, -2, 300, -400]
    before = m.read_u64(m.image.address_of("counter"))
    for k in range(4):
        expected = _u((7 + k) * table[k] + before + k + 1, 64)
        assert call32(m, "memory", [I64, IntType(32)], [7, k]) == expected
    for x, want in ((0, 10), (1 << 32, 20), ((1 << 64) - 1, 30), (5, 100), ((1 << 64) - 5, _u(-100, 64))):
        assert call32(m, "choose", [I64], [x]) == want
    for n, want in ((1, 12), (2, 21), (3, 12)):  # the phis swap as one parallel copy
        assert call32(m, "swap", [I64], [n]) == want
    assert call32(m, "fib", [I64], [15]) == 610
    expected = _py_many(5, -9, 1234, 11, 4294967299, -3) + _py_many(1, 2, 0, 3, 4, 5)
    sp = m.sp
    assert call32(m, "call_many", [], []) == _u(expected, 64)
    assert m.sp == sp  # the callee popped the stack arguments it was given (RETURN_TRAP was popped too)


@pytest.mark.parametrize("frame", ["esp", "ebp"])
def test_more_than_two_arguments_are_popped_by_the_callee(frame):
    compiled = compile_module32(parse_module(MISC_IR), frame=frame)
    listing = compiled.image.listing()
    # i32 a -> ecx, ptr c -> edx; b (2 words), d, e (2 words), f: 6 DWORDs = 24 bytes
    places, size = place_arguments([IntType(32), I64, PointerType(IntType(8), 1), IntType(32), I64, IntType(16)])
    assert [p.register for p in places] == ["ecx", None, "edx", None, None, None]
    assert size == 24
    assert re.search(r"ret\s+0x18", listing)
    m = misc_machine(frame)
    assert call32(m, "many", [IntType(32), I64, PointerType(IntType(8), 1), IntType(32), I64, IntType(16)],
                  [5, _u(-9, 64), 1234, 11, 4294967299, _u(-3, 16)]) == _py_many(5, -9, 1234, 11, 4294967299, -3)


def _body(compiled, name: str) -> list[str]:
    f = compiled.function(name)
    img = compiled.image
    start, end = img.address_of(name), img.address_of(f.end)
    return [i.text for i in disassemble(img.code[start - img.code_base:end - img.code_base], start, "x86_32")]


def test_frame_shapes_follow_the_unwinders_expectations():
    ebp = compile_module32(parse_module(MISC_IR), frame="ebp")
    esp = compile_module32(parse_module(MISC_IR), frame="esp")
    f_ebp, f_esp = ebp.function("many"), esp.function("many")
    code = _body(ebp, "many")
    assert code[:6] == ["push ebp", "mov ebp, esp", "push edi", "push esi", "push ebx",
                        f"sub esp, {hex(f_ebp.frame.size)}"]
    assert code[-6:] == ["lea esp, [ebp - 0xc]", "pop ebx", "pop esi", "pop edi", "pop ebp", "ret 0x18"]
    assert f_ebp.frame.stack_size == f_ebp.frame.size + 16
    code = _body(esp, "many")
    assert code[:4] == ["push edi", "push esi", "push ebx", f"sub esp, {hex(f_esp.frame.size)}"]
    assert code[-5:] == [f"add esp, {hex(f_esp.frame.size)}", "pop ebx", "pop esi", "pop edi", "ret 0x18"]
    assert "ebp" not in " ".join(code)
    assert f_esp.frame.stack_size == f_esp.frame.size + 12
    # a function that never touches ebx/esi/edi saves nothing
    tiny = compile_module32(parse_module("define i32 @k() {\nentry:\n  ret i32 7\n}"), frame="ebp")
    code = _body(tiny, "k")
    assert code[:4] == ["push ebp", "mov ebp, esp", "mov eax, 7", "mov edx, 0"] and code[4].startswith("jmp")
    assert code[5:] == ["mov esp, ebp", "pop ebp", "ret"]


def test_esp_frames_track_pushed_arguments():
    """In an EBP-less frame a slot's ESP offset grows by 4 with every pushed argument."""
    esp = compile_module32(parse_module(MISC_IR), frame="esp")
    call = esp.function("call_many")
    assert [c.pushed for c in call.calls] == [0, 0]
    assert [c.popped for c in call.calls] == [6, 6]
    assert len(call.pushes) == 12
    text = esp.asm_text.split("call_many:")[1].split("call_many.end:")[0]
    pushes = re.findall(r"push e[ad]x", text)
    assert len(pushes) == 12


def test_unsupported_input_is_a_codegen_error():
    with pytest.raises(CodegenError, match="wider than 64 bits"):
        compile_module32(parse_module("define i128 @w(i128 %a) {\nentry:\n  ret i128 %a\n}"))
    with pytest.raises(CodegenError, match="frame kind"):
        compile_module32(parse_module("define void @v() {\nentry:\n  ret void\n}"), frame="fast")
    sp = parse_module(generate_program(3, 4))
    run_passes(sp, "rewrite-statepoints-for-gc")
    with pytest.raises(CodegenError, match="statepoints"):
        compile_module32(sp)


@pytest.mark.parametrize("seed", range(24))
def test_generated_programs_print_what_x86_64_prints(seed):
    text = generate_program(seed, 8)
    got = run_module32(parse_module(text))
    assert got.printed and (got.printed, got.result) == x86_64_reference(text)


@pytest.mark.parametrize("seed,frame", [(100, "esp"), (101, "ebp"), (102, "esp"), (103, "ebp"), (104, "esp"),
                                        (105, "ebp")])
def test_generated_programs_with_forced_frames(seed, frame):
    text = generate_program(seed, 8)
    got = run_module32(parse_module(text), frame=frame)
    assert (got.printed, got.result) == x86_64_reference(text)
