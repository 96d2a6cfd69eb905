"""Roots the stack map names in llc's ways beyond one slot per pointer: a vector of GC pointers live across a
collection (one Indirect location of 8 bytes a lane: the walker gives the collector a pair per lane, so every
lane is rewritten), and an alloca cast to a GC pointer (a Direct location: no collection moves it). Run on
gctoy's own code and on llc-14's object of the same program."""
from __future__ import annotations

import subprocess

import pytest

from gctoy.ir import parse_module
from gctoy.runtime.elfload import load_object
from gctoy.runtime.run import Runtime, load_compiled

SP_ALLOC = ("call token (i64, i32, i8 addrspace(1)* (i64, i64)*, i32, i32, ...) "
            "@llvm.experimental.gc.statepoint.p0f_p1i8i64i64f(i64 0, i32 0, i8 addrspace(1)* (i64, i64)* "
            "elementtype(i8 addrspace(1)* (i64, i64)) @gc_alloc, i32 2, i32 0, i64 1, i64 0, i32 0, i32 0)")

# Two objects, holding 111 and 222, in the lanes of a vector (and of a vector GEP of it) across gc_collect.
PROGRAM = """
declare i8 addrspace(1)* @gc_alloc(i64, i64)
declare void @gc_collect()
declare void @print_i64(i64)
declare token @llvm.experimental.gc.statepoint.p0f_p1i8i64i64f(i64, i32, i8 addrspace(1)* (i64, i64)*, i32, i32, ...)
declare token @llvm.experimental.gc.statepoint.p0f_isVoidf(i64, i32, void ()*, i32, i32, ...)
declare i8 addrspace(1)* @llvm.experimental.gc.result.p1i8(token)
declare i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token, i32, i32)
declare <2 x i8 addrspace(1)*> @llvm.experimental.gc.relocate.v2p1i8(token, i32, i32)

define i64 @main() gc "statepoint-example" {
entry:
  %t0 = """ + SP_ALLOC + """
  %a = call i8 addrspace(1)* @llvm.experimental.gc.result.p1i8(token %t0)
  %ai = bitcast i8 addrspace(1)* %a to i64 addrspace(1)*
  store i64 111, i64 addrspace(1)* %ai
  %t1 = """ + SP_ALLOC + """ [ "gc-live"(i8 addrspace(1)* %a) ]
  %b = call i8 addrspace(1)* @llvm.experimental.gc.result.p1i8(token %t1)
  %a1 = call i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token %t1, i32 0, i32 0)
  %bi = bitcast i8 addrspace(1)* %b to i64 addrspace(1)*
  store i64 222, i64 addrspace(1)* %bi
  %v0 = insertelement <2 x i8 addrspace(1)*> undef, i8 addrspace(1)* %a1, i32 0
  %v = insertelement <2 x i8 addrspace(1)*> %v0, i8 addrspace(1)* %b, i32 1
  %d = getelementptr i8, <2 x i8 addrspace(1)*> %v, i64 0
  %t2 = call token (i64, i32, void ()*, i32, i32, ...) @llvm.experimental.gc.statepoint.p0f_isVoidf(i64 0, i32 0,
        void ()* elementtype(void ()) @gc_collect, i32 0, i32 0, i32 0, i32 0)
        [ "gc-live"(<2 x i8 addrspace(1)*> %v, <2 x i8 addrspace(1)*> %d) ]
  %v2 = call <2 x i8 addrspace(1)*> @llvm.experimental.gc.relocate.v2p1i8(token %t2, i32 0, i32 0)
  %d2 = call <2 x i8 addrspace(1)*> @llvm.experimental.gc.relocate.v2p1i8(token %t2, i32 0, i32 1)
  %x = extractelement <2 x i8 addrspace(1)*> %v2, i32 0
  %y = extractelement <2 x i8 addrspace(1)*> %d2, i32 1
  %xi = bitcast i8 addrspace(1)* %x to i64 addrspace(1)*
  %yi = bitcast i8 addrspace(1)* %y to i64 addrspace(1)*
  %xv = load i64, i64 addrspace(1)* %xi
  %yv = load i64, i64 addrspace(1)* %yi
  call void @print_i64(i64 %xv)
  call void @print_i64(i64 %yv)
  %s = add i64 %xv, %yv
  ret i64 %s
}
"""


def _run(loaded, stress: bool):
    runtime = Runtime(loaded, stress=stress, verify=True)
    result = runtime.run(entry="main")
    return runtime.printed, result.result, len(runtime.collections)


@pytest.mark.parametrize("stress", [False, True], ids=["collect", "stress"])
def test_every_lane_is_relocated_in_gctoy_code(stress):
    printed, result, collections = _run(load_compiled(parse_module(PROGRAM)), stress)
    assert (printed, result) == ([111, 222], 333)
    assert collections >= 1


def test_every_lane_is_relocated_in_llc14_code(llvm14, tmp_path):
    src, obj = tmp_path / "vec.ll", tmp_path / "vec.o"
    src.write_text(PROGRAM)
    res = subprocess.run([str(llvm14.llc), "-O2", "-filetype=obj", str(src), "-o", str(obj)],
                         capture_output=True, text=True, check=False)
    assert res.returncode == 0, res.stderr
    printed, result, collections = _run(load_object(obj), stress=False)
    assert (printed, result) == ([111, 222], 333) and collections == 1


# An alloca cast to a GC pointer live across a collection beside a heap object: llc records the cast as the
# alloca's address (Direct), gctoy too; the walker leaves it alone and relocates the object.
CAST_ALLOCA = """
declare i8 addrspace(1)* @gc_alloc(i64, i64)
declare void @gc_collect()
declare token @llvm.experimental.gc.statepoint.p0f_p1i8i64i64f(i64, i32, i8 addrspace(1)* (i64, i64)*, i32, i32, ...)
declare token @llvm.experimental.gc.statepoint.p0f_isVoidf(i64, i32, void ()*, i32, i32, ...)
declare i8 addrspace(1)* @llvm.experimental.gc.result.p1i8(token)
declare i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token, i32, i32)

define i64 @main() gc "statepoint-example" {
entry:
  %slot = alloca i64
  store i64 40, i64* %slot
  %t0 = """ + SP_ALLOC + """
  %a = call i8 addrspace(1)* @llvm.experimental.gc.result.p1i8(token %t0)
  %ai = bitcast i8 addrspace(1)* %a to i64 addrspace(1)*
  store i64 2, i64 addrspace(1)* %ai
  %g = addrspacecast i64* %slot to i8 addrspace(1)*
  %t1 = call token (i64, i32, void ()*, i32, i32, ...) @llvm.experimental.gc.statepoint.p0f_isVoidf(i64 0, i32 0,
        void ()* elementtype(void ()) @gc_collect, i32 0, i32 0, i32 0, i32 0)
        [ "gc-live"(i8 addrspace(1)* %a, i8 addrspace(1)* %g) ]
  %a1 = call i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token %t1, i32 0, i32 0)
  %g1 = call i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token %t1, i32 1, i32 1)
  %a1i = bitcast i8 addrspace(1)* %a1 to i64 addrspace(1)*
  %x = load i64, i64 addrspace(1)* %a1i
  %g1i = bitcast i8 addrspace(1)* %g1 to i64 addrspace(1)*
  %y = load i64, i64 addrspace(1)* %g1i
  %s = add i64 %x, %y
  ret i64 %s
}
"""


def test_an_alloca_cast_to_a_gc_pointer_is_left_alone(llvm14, tmp_path):
    compiled = load_compiled(parse_module(CAST_ALLOCA))
    assert _run(compiled, stress=True)[1:] == (42, 2)
    src, obj = tmp_path / "cast.ll", tmp_path / "cast.o"
    src.write_text(CAST_ALLOCA)
    res = subprocess.run([str(llvm14.llc), "-O2", "-filetype=obj", str(src), "-o", str(obj)],
                         capture_output=True, text=True, check=False)
    assert res.returncode == 0, res.stderr
    assert _run(load_object(obj), stress=False)[1:] == (42, 1)
