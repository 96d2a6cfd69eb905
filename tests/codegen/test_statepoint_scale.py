"""The work of lowering a function grows linearly with its statepoints (counted in lines run, not seconds).

A statepoint's ``gc.relocate`` and ``gc.result`` calls are found through its token's use list; a walk
over the whole function per statepoint made lowering quadratic (x4 per doubling).
bench/bench_many_statepoints.py times the same input against llc.
"""
from __future__ import annotations

import sys
from pathlib import Path

from op_count import count_lines, growth

from gctoy.codegen import compile_module
from gctoy.ir import parse_module

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from bench_many_statepoints import program  # noqa: E402

P = "i8 addrspace(1)*"


def statepoint_ir(n: int) -> str:
    """The benchmark's program after RS4GC, written out: ``n`` statepoints, each with a result and two relocates."""
    lines = [f"declare {P} @gc_alloc(i64, i64)",
             "declare token @llvm.experimental.gc.statepoint.p0f_i64i64f(i64, i32, i64 (i64)*, i32, i32, ...)",
             "declare i64 @llvm.experimental.gc.result.i64(token)",
             f"declare {P} @llvm.experimental.gc.relocate.p1i8(token, i32, i32)", "",
             "define i64 @leaf(i64 %x) {", "entry:", "  %y = add i64 %x, 1", "  ret i64 %y", "}", "",
             f'define i64 @main({P} %a0, {P} %b0) gc "statepoint-example" {{', "entry:"]
    acc = "0"
    for k in range(n):
        lines += [f"  %t{k} = call token (i64, i32, i64 (i64)*, i32, i32, ...) "
                  f"@llvm.experimental.gc.statepoint.p0f_i64i64f(i64 0, i32 0, i64 (i64)* @leaf, i32 1, i32 0, "
                  f"i64 {acc}, i32 0, i32 0) [ \"gc-live\"({P} %a{k}, {P} %b{k}) ]",
                  f"  %r{k} = call i64 @llvm.experimental.gc.result.i64(token %t{k})",
                  f"  %a{k + 1} = call {P} @llvm.experimental.gc.relocate.p1i8(token %t{k}, i32 0, i32 0)",
                  f"  %b{k + 1} = call {P} @llvm.experimental.gc.relocate.p1i8(token %t{k}, i32 1, i32 1)"]
        acc = f"%r{k}"
    lines += [f"  ret i64 {acc}", "}", ""]
    return "\n".join(lines)


def test_the_benchmark_program_is_the_one_described():
    assert program(3).count("call i64 @leaf") == 3


def test_lowering_work_grows_linearly_with_statepoints():
    """Lines run by parse + lower per doubling (measured x2.0; one function walk per statepoint gave x3.6)."""
    counts = []
    for n in (100, 200, 400):
        text = statepoint_ir(n)
        counts.append(count_lines(lambda text=text: compile_module(parse_module(text, "many.ll")))[1])
    assert all(g < 2.3 for g in growth(counts)), (counts, growth(counts))
