"""verify-safepoints on vectors of GC pointers: the same unrelocated uses as LLVM's SafepointIRVerifier.

A vector of ``addrspace(1)`` pointers is a GC value like a pointer: using it after a statepoint
that did not relocate it is an error, and so is using a lane taken out of it or a vector built
from it; a vector GEP of a stale vector is a legal definition whose uses are the errors. The
program is checked by LLVM 19 (opaque) and LLVM 14 (typed) in print-only mode, and gctoy must
report the same (definition, use) pairs.
"""
from __future__ import annotations

import re

import pytest

from gctoy.ir import parse_module, print_module
from gctoy.ir.analysis import LocalNames
from gctoy.llvm_tools import run_opt
from gctoy.passes.verify_safepoints import find_unrelocated_uses

PROGRAM = """
declare void @foo()
declare token @llvm.experimental.gc.statepoint.p0f_isVoidf(i64 immarg, i32 immarg, void ()*, i32 immarg, i32 immarg, ...)
declare <2 x i8 addrspace(1)*> @llvm.experimental.gc.relocate.v2p1i8(token, i32 immarg, i32 immarg)

define <2 x i8 addrspace(1)*> @stale(<2 x i8 addrspace(1)*> %v) gc "statepoint-example" {
entry:
  %t = call token (i64, i32, void ()*, i32, i32, ...) @llvm.experimental.gc.statepoint.p0f_isVoidf(i64 0, i32 0, void ()* @foo, i32 0, i32 0, i32 0, i32 0)
  %g = getelementptr i8, <2 x i8 addrspace(1)*> %v, i64 8
  %e = extractelement <2 x i8 addrspace(1)*> %g, i32 0
  %s = shufflevector <2 x i8 addrspace(1)*> %v, <2 x i8 addrspace(1)*> zeroinitializer, <2 x i32> <i32 0, i32 3>
  ret <2 x i8 addrspace(1)*> %s
}

define <2 x i8 addrspace(1)*> @fresh(<2 x i8 addrspace(1)*> %v, i8 addrspace(1)* %p) gc "statepoint-example" {
entry:
  %ins = insertelement <2 x i8 addrspace(1)*> %v, i8 addrspace(1)* %p, i32 0
  %t = call token (i64, i32, void ()*, i32, i32, ...) @llvm.experimental.gc.statepoint.p0f_isVoidf(i64 0, i32 0, void ()* @foo, i32 0, i32 0, i32 0, i32 0) [ "gc-live"(<2 x i8 addrspace(1)*> %ins) ]
  %r = call <2 x i8 addrspace(1)*> @llvm.experimental.gc.relocate.v2p1i8(token %t, i32 0, i32 0)
  %s = shufflevector <2 x i8 addrspace(1)*> %r, <2 x i8 addrspace(1)*> zeroinitializer, <2 x i32> <i32 0, i32 3>
  %z = insertelement <2 x i8 addrspace(1)*> zeroinitializer, i8 addrspace(1)* null, i32 1
  %n = extractelement <2 x i8 addrspace(1)*> %z, i32 1
  ret <2 x i8 addrspace(1)*> %s
}

define i8 addrspace(1)* @built_before(i8 addrspace(1)* %p) gc "statepoint-example" {
entry:
  %ins = insertelement <2 x i8 addrspace(1)*> undef, i8 addrspace(1)* %p, i32 0
  %t = call token (i64, i32, void ()*, i32, i32, ...) @llvm.experimental.gc.statepoint.p0f_isVoidf(i64 0, i32 0, void ()* @foo, i32 0, i32 0, i32 0, i32 0)
  %e = extractelement <2 x i8 addrspace(1)*> %ins, i32 0
  ret i8 addrspace(1)* %e
}

define void @merged(<2 x i8 addrspace(1)*> %v, i1 %c) gc "statepoint-example" {
entry:
  br i1 %c, label %call, label %join
call:
  %t = call token (i64, i32, void ()*, i32, i32, ...) @llvm.experimental.gc.statepoint.p0f_isVoidf(i64 0, i32 0, void ()* @foo, i32 0, i32 0, i32 0, i32 0) [ "gc-live"(<2 x i8 addrspace(1)*> %v) ]
  %r = call <2 x i8 addrspace(1)*> @llvm.experimental.gc.relocate.v2p1i8(token %t, i32 0, i32 0)
  br label %join
join:
  %m = phi <2 x i8 addrspace(1)*> [ %r, %call ], [ %v, %entry ]
  %x = extractelement <2 x i8 addrspace(1)*> %m, i32 0
  %y = extractelement <2 x i8 addrspace(1)*> %v, i32 1
  ret void
}
"""

EXPECTED = {
    "stale": [("%g", "%e"), ("%v", "%s")],
    "fresh": [],
    "built_before": [("%ins", "%e")],
    "merged": [("%v", "%y")],
}


def _def_key(text: str) -> str:
    """``%name`` of the value an LLVM ``Def:`` line shows (an instruction, or ``<type> %arg``)."""
    m = re.match(r"\s*(%[\w.]+) = ", text)
    return m.group(1) if m else text.split()[-1]


def _use_key(text: str) -> str:
    """``%name`` of the user an LLVM ``Use:`` line shows, or its opcode when it has no name."""
    m = re.match(r"\s*(%[\w.]+) = ", text)
    return m.group(1) if m else text.split()[0]


def llvm_reports(opt, text: str) -> dict[str, list[tuple[str, str]]]:
    """Per function, the sorted (def, use) pairs LLVM's SafepointIRVerifier prints."""
    r = run_opt(opt, ["-passes=verify<safepoint-ir>", "-safepoint-ir-verifier-print-only", "-disable-output"], text)
    assert r.returncode == 0, r.stderr
    out: dict[str, list[tuple[str, str]]] = {}
    fn = None
    lines = r.stderr.splitlines()
    for k, line in enumerate(lines):
        if line.startswith("Verifying gc pointers in function: "):
            fn = line.split(": ", 1)[1]
            out[fn] = []
        elif line == "Illegal use of unrelocated value found!":
            out[fn].append((_def_key(lines[k + 1][4:]), _use_key(lines[k + 2][4:])))
    return {f: sorted(v) for f, v in out.items()}


def gctoy_reports(text: str) -> dict[str, list[tuple[str, str]]]:
    """The same, from gctoy's verify-safepoints."""
    m = parse_module(text, "v.ll")
    out = {}
    for fn in m.definitions():
        names = LocalNames(fn)
        out[fn.name] = sorted((names(u.value), names(u.instruction) if u.instruction.name else u.instruction.opcode)
                              for u in find_unrelocated_uses(fn))
    return out


def test_gctoy_reports_the_stale_vectors():
    assert gctoy_reports(PROGRAM) == EXPECTED


@pytest.mark.parametrize("version", [14, 19])
def test_same_reports_as_llvm(version, request):
    tools = request.getfixturevalue(f"llvm{version}")
    text = PROGRAM if version < 15 else print_module(parse_module(PROGRAM, "v.ll"), opaque=True)
    assert llvm_reports(tools.opt, text) == EXPECTED
    assert gctoy_reports(text) == EXPECTED
