"""Wide values in gctoy llc: vectors (GC pointer vectors live across statepoints included), i128, first-class
aggregates, and floating-point arithmetic. Programs run on the Unicorn Machine as lli-14 runs them; stack maps
have the records, location kinds and sizes llc-14 writes."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from llc_pair import gctoy_llc, llc14_stackmap  # noqa: E402
from test_codegen_programs import run_with_gctoy, run_with_lli  # noqa: E402
from wide_programs import PROGRAMS  # noqa: E402

from gctoy.cli import main  # noqa: E402
from gctoy.codegen import compile_module  # noqa: E402
from gctoy.codegen.frame import CodegenError  # noqa: E402
from gctoy.ir import parse_module  # noqa: E402
from gctoy.stackmap import LocationKind  # noqa: E402

SP = "declare token @llvm.experimental.gc.statepoint.p0f_isVoidf(i64, i32, void ()*, i32, i32, ...)\n"
VRELOC = "declare <2 x i8 addrspace(1)*> @llvm.experimental.gc.relocate.v2p1i8(token, i32, i32)\n"

# A vector and a vector GEP of it relocated as a (base, derived) pair, a constant vector in gc-live, i128 and
# vector deopt values (constants among them): llc spills every one to a slot of the value's size.
VECTOR_STATEPOINT = SP + VRELOC + """
declare void @foo()
define <2 x i8 addrspace(1)*> @lanes(<2 x i8 addrspace(1)*> %v, i64 %off, i128 %big) gc "statepoint-example" {
  %d = getelementptr i8, <2 x i8 addrspace(1)*> %v, i64 %off
  %t = call token (i64, i32, void ()*, i32, i32, ...) @llvm.experimental.gc.statepoint.p0f_isVoidf(i64 7, i32 0, void ()* elementtype(void ()) @foo, i32 0, i32 0, i32 0, i32 0) [ "deopt"(i128 %big, i128 -1, <4 x i32> <i32 1, i32 2, i32 3, i32 4>), "gc-live"(<2 x i8 addrspace(1)*> %v, <2 x i8 addrspace(1)*> %d, <2 x i8 addrspace(1)*> zeroinitializer) ]
  %dr = call <2 x i8 addrspace(1)*> @llvm.experimental.gc.relocate.v2p1i8(token %t, i32 0, i32 1)
  %z = call <2 x i8 addrspace(1)*> @llvm.experimental.gc.relocate.v2p1i8(token %t, i32 2, i32 2)
  %e = extractelement <2 x i8 addrspace(1)*> %z, i32 0
  %r = insertelement <2 x i8 addrspace(1)*> %dr, i8 addrspace(1)* %e, i32 1
  ret <2 x i8 addrspace(1)*> %r
}

define <4 x i8 addrspace(1)*> @wide(<4 x i8 addrspace(1)*> %v) gc "statepoint-example" {
  %t = call token (i64, i32, void ()*, i32, i32, ...) @llvm.experimental.gc.statepoint.p0f_isVoidf(i64 8, i32 0, void ()* elementtype(void ()) @foo, i32 0, i32 0, i32 0, i32 0) [ "gc-live"(<4 x i8 addrspace(1)*> %v) ]
  %r = call <4 x i8 addrspace(1)*> @llvm.experimental.gc.relocate.v4p1i8(token %t, i32 0, i32 0)
  ret <4 x i8 addrspace(1)*> %r
}
declare <4 x i8 addrspace(1)*> @llvm.experimental.gc.relocate.v4p1i8(token, i32, i32)
"""

# Calls with a deopt bundle that are not statepoints: llc writes a record for each (ID 0xABCDEF0F unless the
# call says "statepoint-id"), with the call's calling convention and the deopt values.
DEOPT_CALLS = """
declare void @callee(i64)
declare fastcc i64 @fast(i64)
define i64 @plain(i64 %x, <4 x i32> %v, double %d) {
  call void @callee(i64 %x) [ "deopt"(i64 %x, <4 x i32> %v, i32 3, double %d) ]
  call void @callee(i64 1) #0 [ "deopt"() ]
  %r = call fastcc i64 @fast(i64 %x) [ "deopt"(i64 5) ]
  ret i64 %r
}
attributes #0 = { "statepoint-id"="42" }
"""

# A statepoint whose target returns a first-class struct (in rax:rdx), read by gc.result.
STRUCT_RESULT = """
%pair = type { i64, i8 addrspace(1)* }
declare %pair @make()
declare token @llvm.experimental.gc.statepoint.p0f_pairf(i64, i32, %pair ()*, i32, i32, ...)
declare %pair @llvm.experimental.gc.result.pair(token)
declare i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token, i32, i32)
define i64 @f(i8 addrspace(1)* %p) gc "statepoint-example" {
  %t = call token (i64, i32, %pair ()*, i32, i32, ...) @llvm.experimental.gc.statepoint.p0f_pairf(i64 0, i32 0, %pair ()* elementtype(%pair ()) @make, i32 0, i32 0, i32 0, i32 0) [ "gc-live"(i8 addrspace(1)* %p) ]
  %r = call %pair @llvm.experimental.gc.result.pair(token %t)
  %p2 = call i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token %t, i32 0, i32 0)
  %a = extractvalue %pair %r, 0
  ret i64 %a
}
"""


def _records(stackmap) -> list[tuple]:
    """Per record: its ID, and each location's kind and size (the header constants' values too)."""
    out = []
    for rec in stackmap.records:
        locs = tuple((loc.kind.name, loc.size) for loc in rec.locations)
        out.append((rec.id, rec.locations[2].offset, locs))
    return out




@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_program_output_equals_lli(name: str) -> None:
    text = PROGRAMS[name]
    assert run_with_gctoy(text) == run_with_lli(text)


@pytest.mark.parametrize("text", [VECTOR_STATEPOINT, DEOPT_CALLS, STRUCT_RESULT],
                         ids=["vector-statepoint", "deopt-calls", "struct-result"])
def test_records_equal_llc14(llvm14, tmp_path, text):
    ours = gctoy_llc(text, tmp_path).stackmap
    ref = llc14_stackmap(llvm14, text, tmp_path)
    assert [f.record_count for f in ours.functions] == [f.record_count for f in ref.functions]
    assert _records(ours) == _records(ref)


def test_vector_locations_name_the_whole_slot(tmp_path):
    """Base and derived vectors are two 16-byte slots; the relocates read those slots after the call."""
    compiled = gctoy_llc(VECTOR_STATEPOINT, tmp_path)
    rec = compiled.stackmap.records[0]
    zero, zero2, base, derived = rec.locations[6:]  # the relocates, most recent first, as llc lists them
    assert {loc.kind for loc in (base, derived, zero)} == {LocationKind.INDIRECT}
    assert (base.size, derived.size, zero.offset) == (16, 16, zero2.offset)
    assert len({zero.offset, base.offset, derived.offset}) == 3
    lines = compiled.asm_text.splitlines()
    after = lines[next(i for i, line in enumerate(lines) if line.startswith("lanes.sp0")):]
    assert f"    mov rax, qword ptr [rsp + {derived.offset} + 8]" in after
    assert f"    mov rax, qword ptr [rsp + {zero.offset} + 0]" in after


def test_deopt_call_record_ids(tmp_path):
    records = gctoy_llc(DEOPT_CALLS, tmp_path).stackmap.records
    assert [r.id for r in records] == [0xABCDEF0F, 42, 0xABCDEF0F]
    assert [r.locations[0].offset for r in records] == [0, 0, 8]  # ccc, ccc, fastcc


@pytest.mark.parametrize("body, message", [
    ("%v = sdiv <2 x i64> %a, %a\n  ret void", "'sdiv' on <2 x i64> is not supported"),
    ("%v = icmp eq <2 x i64> %a, %a\n  ret void", "vectors of i1 (<2 x i1>) are not supported"),
    ("%v = frem double 1.0, 2.0\n  ret void", "'frem' is not supported"),
    ("%v = getelementptr i8, ptr null, <2 x double> <double 1.0, double 2.0>\n  ret void",
     "getelementptr index of type <2 x double> is not an integer"),
])
def test_unsupported_wide_operations_are_located_errors(tmp_path, capsys, body, message):
    src = tmp_path / "bad.ll"
    src.write_text(f"define void @f(<2 x i64> %a) {{\n  {body}\n}}\n")
    assert main(["llc", str(src), "-o", str(tmp_path / "bad.s")]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"{src}:2:") and message in err and "Traceback" not in err


def test_a_vector_constant_holding_an_address_is_refused():
    text = "@g = global i64 0\ndefine <2 x i64*> @f() {\n  ret <2 x i64*> <i64* @g, i64* null>\n}\n"
    with pytest.raises(CodegenError, match="is not supported in a wide value"):
        compile_module(parse_module(text, "v.ll"))
