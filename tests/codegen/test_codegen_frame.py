"""Type layout and the Frame: natural alignment, distinct 8-byte slots, 16-byte aligned frame size."""

from __future__ import annotations

from gctoy.codegen import Frame, align_of, field_offset, size_of
from gctoy.ir import parse_module, parse_type

FRAME_IR = """
declare void @g(i64, i64, i64, i64, i64, i64, i64, i64)

define i64 @f(i64 %x, i32 %y) {
entry:
  %buf = alloca [3 x i8]
  %w = alloca i64
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %j, %loop ]
  %j = add i64 %i, 1
  call void @g(i64 1, i64 2, i64 3, i64 4, i64 5, i64 6, i64 7, i64 %j)
  %c = icmp ult i64 %j, 3
  br i1 %c, label %loop, label %out
out:
  ret i64 %j
}
"""


def test_struct_fields_use_natural_alignment() -> None:
    ty = parse_type("{ i8, i64, i32, i8 }")
    assert [field_offset(ty, i) for i in range(4)] == [0, 8, 16, 20]
    assert size_of(ty) == 24 and align_of(ty) == 8
    packed = parse_type("<{ i8, i64 }>")
    assert field_offset(packed, 1) == 1 and size_of(packed) == 9
    assert size_of(parse_type("[5 x i32]")) == 20
    assert [size_of(parse_type(t)) for t in ("i1", "i8", "i16", "i32", "i64", "i8*")] == [1, 1, 2, 4, 8, 8]


def test_frame_slots_are_distinct_and_aligned() -> None:
    fn = parse_module(FRAME_IR).get_function("f")
    frame = Frame(fn)
    assert frame.outgoing_size == 16  # two of the eight arguments go on the stack
    assert frame.size % 16 == 0 and frame.stack_size == frame.size + 8
    slots = [frame.slot(v) for v in frame.values]
    phi = next(v for v in frame.values if v.name == "i")
    slots.append(frame.shadow(phi))
    assert len(set(slots)) == len(slots)
    assert all(s % 8 == 0 and frame.outgoing_size <= s < frame.size for s in slots)
    buf, w = frame.allocas
    assert frame.alloca(w) % 8 == 0
    objects = sorted([(frame.alloca(buf), 3), (frame.alloca(w), 8)] + [(s, 8) for s in slots])
    for (start, size), (nxt, _) in zip(objects, objects[1:]):
        assert start + size <= nxt
    assert "shadow of %i" in frame.describe()
