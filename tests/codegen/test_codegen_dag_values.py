"""Values that llc's selection DAG sees as one node are recorded once, as llc does: no-op casts of an alloca
(a Direct location, and a gc-live alloca), inttoptr of a constant, two loads of one address with no store or
call between them, undef (0xFEFEFEFE in the constant pool); a statepoint invoke lists its normal relocates,
then its landing pad's."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from llc_pair import gctoy_llc, llc14_stackmap  # noqa: E402

from gctoy.stackmap import LocationKind

DECLS = """declare token @llvm.experimental.gc.statepoint.p0f_isVoidf(i64, i32, void ()*, i32, i32, ...)
declare token @llvm.experimental.gc.statepoint.p0f_isVoidp1i8f(i64, i32, void (i8 addrspace(1)*)*, i32, i32, ...)
declare i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token, i32, i32)
declare void @foo()
declare void @take(i8 addrspace(1)*)
declare i32 @pers()"""

CASTS_AND_INVOKE = DECLS + """
define i8 addrspace(1)* @casts(i8 addrspace(1)* %x) gc "statepoint-example" personality i32 ()* @pers {
entry:
  %slot = alloca i64
  %gslot = addrspacecast i64* %slot to i8 addrspace(1)*
  %k = inttoptr i64 99 to i8 addrspace(1)*
  %t = invoke token (i64, i32, void (i8 addrspace(1)*)*, i32, i32, ...) @llvm.experimental.gc.statepoint.p0f_isVoidp1i8f(i64 0, i32 0, void (i8 addrspace(1)*)* elementtype(void (i8 addrspace(1)*)) @take, i32 1, i32 0, i8 addrspace(1)* %x, i32 0, i32 0) [ "gc-live"(i8 addrspace(1)* %x, i8 addrspace(1)* %gslot, i8 addrspace(1)* %k) ]
          to label %ok unwind label %bad
ok:
  %x2 = call i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token %t, i32 0, i32 0)
  %g2 = call i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token %t, i32 1, i32 1)
  ret i8 addrspace(1)* %x2
bad:
  %lp = landingpad token cleanup
  %k2 = call i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token %lp, i32 2, i32 2)
  %x3 = call i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token %lp, i32 0, i32 0)
  ret i8 addrspace(1)* %x3
}"""

LOADS_AND_UNDEF = DECLS + """
define void @loads(i8 addrspace(1)* addrspace(1)* %p, i8 addrspace(1)* addrspace(1)* %q) gc "statepoint-example" {
entry:
  %a = load i8 addrspace(1)*, i8 addrspace(1)* addrspace(1)* %p
  %b = load i8 addrspace(1)*, i8 addrspace(1)* addrspace(1)* %p
  %c = load i8 addrspace(1)*, i8 addrspace(1)* addrspace(1)* %q
  call void @take(i8 addrspace(1)* %c)
  %d = load i8 addrspace(1)*, i8 addrspace(1)* addrspace(1)* %p
  %t = call token (i64, i32, void ()*, i32, i32, ...) @llvm.experimental.gc.statepoint.p0f_isVoidf(i64 0, i32 0, void ()* elementtype(void ()) @foo, i32 0, i32 0, i32 0, i32 0) [ "deopt"(i8 addrspace(1)* undef, i8 addrspace(1)* undef), "gc-live"(i8 addrspace(1)* %a, i8 addrspace(1)* %b, i8 addrspace(1)* %c, i8 addrspace(1)* %d) ]
  %a2 = call i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token %t, i32 0, i32 0)
  %b2 = call i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token %t, i32 1, i32 1)
  %c2 = call i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token %t, i32 2, i32 2)
  %d2 = call i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token %t, i32 3, i32 3)
  call void @take(i8 addrspace(1)* %a2)
  call void @take(i8 addrspace(1)* %b2)
  call void @take(i8 addrspace(1)* %c2)
  call void @take(i8 addrspace(1)* %d2)
  ret void
}"""


def _records(stackmap) -> list[tuple]:
    return [(rec.id, tuple((loc.kind.name, loc.size) for loc in rec.locations)) for rec in stackmap.records]




@pytest.mark.parametrize("text", [CASTS_AND_INVOKE, LOADS_AND_UNDEF], ids=["casts-invoke", "loads-undef"])
def test_records_equal_llc14(llvm14, tmp_path, text):
    assert _records(gctoy_llc(text, tmp_path).stackmap) == _records(llc14_stackmap(llvm14, text, tmp_path))


def test_cast_alloca_is_direct_and_the_landing_pad_pairs_come_last(tmp_path):
    compiled = gctoy_llc(CASTS_AND_INVOKE, tmp_path)
    (rec,) = compiled.stackmap.records
    kinds = "".join(loc.kind.name[0] for loc in rec.locations[3:])
    assert kinds == "DDIICCD"
    frame = compiled.functions[0].frame
    slot = next(a for a in frame.allocas if a.name == "slot")
    assert rec.locations[3].offset == rec.locations[-1].offset == frame.alloca(slot)
    assert rec.locations[7].offset == 99


def test_loads_of_one_address_are_one_value_until_memory_changes(tmp_path):
    """(The slot lowering's code: the register lowering's relocates are checked in test_codegen_llc_conformance.)"""
    compiled = gctoy_llc(LOADS_AND_UNDEF, tmp_path, regalloc=False)
    (rec,) = compiled.stackmap.records
    undef = rec.locations[3]
    assert undef.kind is LocationKind.CONSTANT_INDEX and compiled.stackmap.constants[undef.offset] == 0xFEFEFEFE
    slots = [loc.offset for loc in rec.locations[5:11]]
    assert len(set(slots)) == 3  # %a and %b are one value; %c and %d (after the call) are their own
    lines = compiled.asm_text.splitlines()
    frame = compiled.functions[0].frame
    fn = frame.function
    a2, b2 = (i for i in fn.instructions() if i.name in ("a2", "b2"))
    for inst in (a2, b2):
        store = lines.index(f"    mov qword ptr [rsp + {frame.slot(inst)}], rax")
        assert lines[store - 1] == lines[lines.index(f"    mov qword ptr [rsp + {frame.slot(a2)}], rax") - 1]
