"""`gctoy llc` names the line and column of what it cannot lower: an argument, an alloca or a phi of an
unsupported type, a global it cannot lay out, a function whose GC strategy is unknown or whose frame its
strategy's metadata table cannot describe (its ``define``), a name that clashes with one of the code
generator's labels."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

FP128 = "values of type fp128 are not supported by the x86-64 code generator"
V2I1 = "vectors of i1 (<2 x i1>) are not supported by the x86-64 code generator"

#: name -> (input, line, column, message, extra llc options to try beside the default)
CASES = {
    "fp128 argument": (
        "define void @f(i64 %a, fp128 %x) {\n  ret void\n}\n", 1, 24, FP128, ["--no-regalloc"]),
    "fp128 alloca": (
        "define void @f() {\n  %p = alloca i64\n  %a = alloca fp128\n  ret void\n}\n", 3, 8, FP128,
        ["--no-regalloc"]),
    "fp128 phi": (
        "define void @f() {\nentry:\n  br label %b\nb:\n"
        "  %p = phi fp128 [ 0xL00000000000000000000000000000000, %entry ]\n  ret void\n}\n", 5, 8, FP128,
        ["--no-regalloc"]),
    "x86_fp80 alloca": (
        "define void @f() {\n  %a = alloca x86_fp80\n  ret void\n}\n", 2, 8,
        "values of type x86_fp80 are not supported by the x86-64 code generator", []),
    "<2 x i1> argument": (
        "define <2 x i1> @f(<2 x i1> %x) {\n  ret <2 x i1> %x\n}\n", 1, 20, V2I1, ["--no-regalloc"]),
    "<2 x i1> alloca": (
        "define void @f() {\n  %a = alloca <2 x i1>\n  ret void\n}\n", 2, 8, V2I1, ["--no-regalloc"]),
    "fp128 global": (
        "@ok = global i64 1\n@g = global fp128 0xL00000000000000000000000000000000\n"
        "define void @f() {\n  ret void\n}\n", 2, 1, FP128, []),
    "<2 x i1> global": (
        "@g = global <2 x i1> <i1 true, i1 false>\ndefine void @f() {\n  ret void\n}\n", 1, 1, V2I1, []),
    "function pointer in data": (
        "define void @f() {\n  ret void\n}\n@p = global void ()* @f\n", 4, 1,
        "global initializer void ()* @f is not supported by the x86-64 code generator", []),
    "gc ocaml frame beyond its table": (
        "declare void @llvm.gcroot(i8**, i8*)\ndeclare void @g()\n\ndefine void @f() gc \"ocaml\" {\nentry:\n"
        "  %r = alloca i8*\n  %pad = alloca [9000 x i64]\n  call void @llvm.gcroot(i8** %r, i8* null)\n"
        "  call void @g()\n  ret void\n}\n", 4, 1,
        "@f: frame size 72008 does not fit the 16 bits of the table", []),
    "name of a code label": (
        'define i64 @f() {\n  ret i64 0\n}\n@"f.bb0" = global i64 0\n', 4, 1,
        "@f.bb0 has the name of a label gctoy makes for the code; rename it", []),
    "unknown GC strategy": (
        "declare void @g()\ndefine void @f() gc \"no-such-gc\" {\n  call void @g()\n  ret void\n}\n", 2, 1,
        'unsupported GC: "no-such-gc" (known strategies: coreclr, erlang, gctoy-cardmark, gctoy-gcmap, '
        "gctoy-readbarrier, ocaml, shadow-stack, statepoint-example)", ["--target x86-32"]),
    "x86-32: fp128 argument": (
        "define void @f(fp128 %x) {\n  ret void\n}\n", 1, 16,
        "values of type fp128 are not supported by the x86-32 code generator", None),
    "x86-32: float instruction": (
        "define void @f() {\n  %c = fadd float 1.0, 2.0\n  ret void\n}\n", 2, 8,
        "values of type float are not supported by the x86-32 code generator", None),
    "x86-32: thread-local global": (
        "@t = thread_local global i32 0\ndefine void @f() {\n  ret void\n}\n", 1, 1,
        "thread-local global @t is not supported by the x86-32 code generator", None),
}


def _runs():
    for name, (_, _, _, _, extra) in CASES.items():
        if extra is None:
            yield pytest.param(name, ("--target", "x86-32"), id=name)
            continue
        yield pytest.param(name, (), id=name)
        for option in extra:
            yield pytest.param(name, tuple(option.split()), id=f"{name} {option}")


def gctoy(*args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return subprocess.run([sys.executable, "-m", "gctoy", *args], capture_output=True, text=True, timeout=120,
                          check=False, env=env)


@pytest.mark.parametrize(("name", "options"), list(_runs()))
def test_llc_error_names_line_and_column(tmp_path: Path, name: str, options: tuple[str, ...]) -> None:
    text, line, column, message, _ = CASES[name]
    path = tmp_path / "in.ll"
    path.write_text(text)
    res = gctoy("llc", *options, str(path), "-o", str(tmp_path / "out.s"))
    assert res.returncode == 1 and "Traceback" not in res.stderr, res.stderr
    assert res.stderr == f"{path}:{line}:{column}: error: {message}\n"
