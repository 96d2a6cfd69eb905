"""gctoy.viz.stackmap and gctoy.viz.frame: the annotated hex dump, location roles, frame pictures."""
from __future__ import annotations

import pytest

from gctoy.codegen import compile_module
from gctoy.errors import DecodeError
from gctoy.ir import parse_module
from gctoy.stackmap import Location, LocationKind, LiveOut, StackMap, StackMapRecord, StkSizeRecord, emit
from gctoy.viz.frame import frame_diagram, frame_rows
from gctoy.viz.stackmap import (
    annotated_hexdump,
    format_hexdump,
    statepoint_roles,
    v1_location_bytes,
)

C = LocationKind.CONSTANT


def _loc(kind, reg=0, off=0, size=8):
    return Location(kind, size, reg, off)


# One function, a pool constant, a statepoint record (odd number of locations: 4 bytes of padding
# after them) and a record with one live-out.
SM = StackMap(
    3,
    (StkSizeRecord(0x400000, 24, 2),),
    (12345678901,),
    (
        StackMapRecord(7, 10, 0, (_loc(C), _loc(C), _loc(C, off=1), _loc(LocationKind.CONSTANT_INDEX),
                                  _loc(LocationKind.INDIRECT, 7, 8), _loc(LocationKind.INDIRECT, 7, 16),
                                  _loc(LocationKind.DIRECT, 7, -8))),
        StackMapRecord(9, 20, 0, (_loc(LocationKind.REGISTER, 3),), (LiveOut(5, 8),)),
    ),
)


def test_rows_cover_the_section_in_order():
    data = emit(SM)
    rows = annotated_hexdump(data)
    assert b"".join(r.data for r in rows) == data
    pos = 0
    for r in rows:
        assert r.offset == pos and len(r.data) > 0
        pos += len(r.data)


def test_fields_and_values():
    rows = {r.field: r for r in annotated_hexdump(emit(SM))}
    assert rows["Version"].value == "3" and rows["Version"].data == b"\x03"
    assert rows["NumRecords"].data == b"\x02\0\0\0"
    assert rows["fn[0].FunctionAddress"].value == "0x400000"
    assert rows["constant[0]"].value == "12345678901"
    assert rows["rec[0].PatchPointID"].value == "7 (0x7)"
    assert rows["rec[0].loc#4.ConstantIndex"].value == "#0 -> 12345678901"
    assert rows["rec[0].loc#5.Type"].value == "3 Indirect"
    assert rows["rec[0].loc#5.DwarfRegNum"].value == "7 RSP"
    assert rows["rec[0].loc#5.Offset"].value == "+8"
    assert rows["rec[0].loc#7.Offset"].data == b"\xf8\xff\xff\xff" and rows["rec[0].loc#7.Offset"].value == "-8"
    assert rows["rec[1].liveout#1.DwarfRegNum"].value == "5 RDI"
    # 7 locations: 16 + 84 = 100 bytes, so 4 bytes of padding before the live-out header; no
    # live-outs: 4 more after it
    pads = [r for r in annotated_hexdump(emit(SM)) if r.field == "rec[0].Padding"]
    assert [len(p.data) for p in pads] == [4, 2, 4]


def test_grouped_table_has_one_line_per_location():
    text = format_hexdump(annotated_hexdump(emit(SM)), group=True)
    assert text.count("rec[0].loc#") == 7
    assert "rec[0].loc#5              Type=3 Indirect, Size=8, DwarfRegNum=7 RSP, Offset=+8" in text
    assert "Reserved=" not in text


def test_malformed_bytes_raise_decode_error():
    data = bytearray(emit(SM))
    data[0] = 2
    with pytest.raises(DecodeError):
        annotated_hexdump(bytes(data))


def test_statepoint_roles():
    assert statepoint_roles(SM.records[0]) == [
        "calling convention", "flags", "deopt count", "deopt value 0",
        "pair 0 base", "pair 0 derived", "gc-live alloca 0",
    ]
    with pytest.raises(ValueError):
        statepoint_roles(SM.records[1])


def test_v1_location_is_eight_bytes():
    assert v1_location_bytes(2, 8, 7, 0) == bytes([2, 8, 7, 0, 0, 0, 0, 0])


SEED = """\
define i8 addrspace(1)* @test1(i8 addrspace(1)* %obj) gc "statepoint-example" {
  %tok = call token (i64, i32, void ()*, i32, i32, ...) @llvm.experimental.gc.statepoint.p0f_isVoidf(i64 2882400000, i32 0, void ()* @foo, i32 0, i32 0, i32 0, i32 0) [ "gc-live"(i8 addrspace(1)* %obj) ]
  %obj.relocated = call coldcc i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token %tok, i32 0, i32 0)
  ret i8 addrspace(1)* %obj.relocated
}
declare void @foo()
declare token @llvm.experimental.gc.statepoint.p0f_isVoidf(i64 immarg, i32 immarg, void ()*, i32 immarg, i32 immarg, ...)
declare i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token, i32 immarg, i32 immarg)
"""


@pytest.mark.parametrize("regalloc", [True, False], ids=["registers", "slots"])
def test_frame_diagram_marks_the_recorded_slot(regalloc):
    compiled = compile_module(parse_module(SEED), regalloc=regalloc)
    frame = compiled.functions[0].frame
    picture = frame_diagram(frame, compiled.stackmap.records[0])
    assert "rsp + 0   | %obj " in picture and ("%obj (spilled)" in picture) == regalloc
    assert "#4 pair 0 base (Indirect), #5 pair 0 derived (Indirect)" in picture
    assert f"{f'rsp + {frame.stack_size}':<10}| return address" in picture
    assert ("saved rbp" in picture) != regalloc and ("in registers" in picture) == regalloc
    offsets = [off for off, _, _ in frame_rows(frame)]
    assert offsets == sorted(offsets, reverse=True) and offsets[-1] == 0
