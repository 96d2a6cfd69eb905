"""Strategy table, marked listings, __gcmap_ byte dumps, the table-driven frame walk and card grids."""
from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gctoy.codegen import compile_module
from gctoy.codegen.gcmap import GCMap, compile_with_gcmaps, parse_gcmap, read_gcmap, safe_points
from gctoy.emu import RETURN_TRAP, Machine
from gctoy.errors import GCToyError
from gctoy.ir import parse_module
from gctoy.passes import lower_barriers as LB
from gctoy.passes import run
from gctoy.runtime.heap import Heap
from gctoy.strategy import ALL_POINT_KINDS, BUILTIN_STRATEGIES, GCStrategy, PointKind
from gctoy.viz import gcmap as V

LOOP = """declare void @llvm.gcroot(i8**, i8*)
declare i8* @gc_alloc(i64, i64)
declare void @print_i64(i64)

define i64 @count(i64 %n) gc "gctoy-gcmap" {
entry:
  %keep = alloca i8*
  call void @llvm.gcroot(i8** %keep, i8* null)
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i1, %loop ]
  %cell = call i8* @gc_alloc(i64 1, i64 0)
  store i8* %cell, i8** %keep
  call void @print_i64(i64 %i)
  %i1 = add i64 %i, 1
  %more = icmp ult i64 %i1, %n
  br i1 %more, label %loop, label %done
done:
  ret i64 %i1
}
"""


@pytest.fixture(scope="module")
def loop():
    m = parse_module(LOOP, "loop.ll")
    run(m, "verify,lower-gc-barriers,verify")
    return compile_module(m)


# ------------------------------------------------------------------ strategies


def test_strategy_rows_show_the_flags_and_llvm14_fields():
    rows = {r[0]: r for r in V.strategy_rows(BUILTIN_STRATEGIES)}
    assert rows["erlang"][6] == "PostCall" and rows["erlang"][7] == "yes"
    assert rows["erlang"][8] == "NeededSafePoints, UsesMetadata"
    assert rows["gctoy-gcmap"][6] == "Loop|Return|PreCall|PostCall"
    assert rows["shadow-stack"][3] == "yes" and rows["shadow-stack"][8] == "-"
    assert rows["statepoint-example"][1:3] == ("yes", "yes") and rows["statepoint-example"][8] == "UseStatepoints"
    assert rows["gctoy-cardmark"][5] == "yes" and rows["gctoy-readbarrier"][4] == "yes"
    assert all(len(r) == len(V.STRATEGY_COLUMNS) for r in rows.values())


def test_strategy_tables_as_text_and_html():
    mine = GCStrategy("mine", needed_safe_points={PointKind.RETURN, PointKind.LOOP})
    text = V.strategy_table_text([mine, *BUILTIN_STRATEGIES])
    lines = text.splitlines()
    assert lines[0].startswith("strategy") and set(lines[1]) <= {"-", " "}
    assert re.match(r"mine\s+no\s+yes\s+no\s+no\s+no\s+Loop\|Return\s+no\s+NeededSafePoints$", lines[2])
    page = V.strategy_table_html([mine])
    assert page.count("<tr>") == 2 and ">Loop|<wbr>Return</td>" in page
    # narrow enough for the book's column: headers wrap at CamelCase humps, flags are centred
    assert "Custom<wbr>Read<wbr>Barriers" in page and "max-width:100%" in page
    assert 'text-align:center">yes</td>' in page and 'text-align:left">mine</td>' in page
    assert V.safe_point_kinds_text(()) == "-"


# ------------------------------------------------------------------ listings


def test_marks_sit_on_the_lines_safe_points_name(loop):
    lines = V.marked_listing(loop, "count")
    points = safe_points(loop, "count", ALL_POINT_KINDS)
    marked = [(line.address, k) for line in lines for k in line.marks]
    assert marked == [(p.address, p.kind) for p in points]
    by_address = {line.address: line for line in lines}
    for p in points:
        text = by_address[p.address].text
        if p.kind is PointKind.PRE_CALL:
            assert text in ("call gc_alloc", "call print_i64")  # natives are named
        if p.kind is PointKind.LOOP:
            assert text.startswith("j")
        if p.kind is PointKind.RETURN:
            assert text == "ret"


def test_listing_text_and_html(loop):
    only_loops = V.marked_listing(loop, "count", {PointKind.LOOP})
    text = V.listing_text(only_loops)
    assert text.count("<- ") == 1 and re.search(r"j\w+ 0x[0-9a-f]+\s+<- Loop$", text, re.M)
    page = V.listing_html(only_loops, caption="<i>c</i>")
    assert page.startswith("<div><i>c</i></div><pre") and page.count("&lt;- <b>Loop</b>") == 1
    assert V.KIND_COLOURS[PointKind.LOOP] in page


def test_kind_pages_split_the_safe_points(loop):
    pages = V.kind_pages(loop, "count")
    assert [p.label for p in pages] == ["Loop", "Return", "PreCall", "PostCall", "all four"]
    counts = {p.label: p.count for p in pages}
    assert counts == {"Loop": 1, "Return": 1, "PreCall": 2, "PostCall": 2, "all four": 6}
    assert all(p.kinds >= {k for line in p.lines for k in line.marks} for p in pages)
    assert "6 safe point(s)" in pages[-1].html()


def test_a_postcall_point_past_the_last_instruction_gets_its_own_line(monkeypatch):
    compiled = compile_module(parse_module('declare void @stop()\ndefine void @f() gc "gctoy-gcmap" {\n'
                                           'entry:\n  call void @stop()\n  unreachable\n}\n'))
    real = V.function_code
    monkeypatch.setattr(V, "function_code", lambda c, n: [i for i in real(c, n) if i.mnemonic != "ud2"])
    last = V.marked_listing(compiled, "f")[-1]
    assert last.text == "(end of function)" and last.marks == (PointKind.POST_CALL,)


# ------------------------------------------------------------------ __gcmap_ bytes

TABLES = st.builds(
    GCMap, st.just("f"),
    st.lists(st.integers(0, (1 << 32) - 1), max_size=6).map(tuple),
    st.integers(0, 1 << 16), st.integers(0, 8),
    st.lists(st.integers(-(1 << 20), 1 << 20), max_size=6).map(tuple))


@given(TABLES, st.sampled_from([4, 8]))
def test_fields_cover_the_bytes_and_hold_their_values(table, size):
    raw = table.to_bytes(size)
    fields = V.gcmap_fields(table, size)
    assert fields[0].start == 0 and fields[-1].end == len(raw)
    assert all(a.end == b.start for a, b in zip(fields, fields[1:]))
    for f in fields:
        assert int.from_bytes(raw[f.start:f.end], "little", signed=f.value < 0) == f.value
    assert parse_gcmap(raw, size, "f") == table


def test_dump_names_every_field_at_its_address(loop):
    out = compile_with_gcmaps(parse_module(LOOP))[1]
    (table,) = out.maps
    base = out.image.address_of(table.symbol)
    text = V.gcmap_dump_text(table, base=base)
    lines = text.splitlines()
    assert lines[0] == "__gcmap_count:" and len(lines) == 1 + len(V.gcmap_fields(table))
    assert re.search(rf"{base:#010x}  06 00 00 00\s+PointCount\s+6$", text, re.M)
    assert "SafePointAddress[4] (Loop)" in text and "LiveOffsets[0] (bytes from rsp)" in text
    decoded = read_gcmap(out.image, "count")
    assert "(Loop)" not in V.gcmap_dump_text(decoded)  # kinds are not in the bytes


# ------------------------------------------------------------------ the walk

WALK = """declare void @llvm.gcroot(i8**, i8*)
declare i8* @gc_alloc(i64, i64)
declare void @probe()

define void @leaf(i8* %p) gc "gctoy-gcmap" {
entry:
  %r = alloca i8*
  call void @llvm.gcroot(i8** %r, i8* null)
  store i8* %p, i8** %r
  call void @probe()
  ret void
}

define i64 @main() gc "gctoy-gcmap" {
entry:
  %a = alloca i8*
  call void @llvm.gcroot(i8** %a, i8* null)
  %x = call i8* @gc_alloc(i64 1, i64 0)
  store i8* %x, i8** %a
  call void @leaf(i8* %x)
  ret i64 0
}
"""


def test_walk_finds_the_roots_of_every_frame():
    m = parse_module(WALK, "walk.ll")
    run(m, "verify,lower-gc-barriers,verify")
    _, out = compile_with_gcmaps(m)
    machine = Machine(out.image, heap_size=0x20000)
    heap = Heap(machine, 0x10000)
    got: dict[str, object] = {}

    def probe() -> None:
        got["printed"] = V.walk_gcmap_frames(machine.read_u64, machine.sp, out.maps, RETURN_TRAP)
        decoded = [read_gcmap(out.image, t.function) for t in out.maps]
        got["decoded"] = V.walk_gcmap_frames(machine.read_u64, machine.sp, decoded, RETURN_TRAP)

    machine.register_native("gc_alloc", lambda n, mask: heap.alloc(n, mask))
    machine.register_native("probe", probe)
    assert machine.call("main") == 0
    leaf, main = got["printed"]
    assert (leaf.function, main.function) == ("leaf", "main")
    assert leaf.kind is main.kind is PointKind.POST_CALL
    (slot, value), = leaf.roots
    assert main.roots[0][1] == value != 0 and slot == leaf.rsp
    assert main.rsp > leaf.rsp and main.return_address in dict(zip(out.maps[1].safe_points, out.maps[1].kinds))
    text = V.frames_text(got["printed"])
    assert text.splitlines()[0].startswith("@leaf") and f"= {value:#x}" in text and "(PostCall)" in text
    # the bytes alone (no kinds) find the same frames and roots
    assert [(f.function, f.return_address, f.roots) for f in got["decoded"]] == \
        [(f.function, f.return_address, f.roots) for f in got["printed"]]
    assert all(f.kind is None for f in got["decoded"]) and "(PostCall)" not in V.frames_text(got["decoded"])


def test_walk_rejects_unknown_and_non_postcall_addresses():
    memory = {0x1000: 0x1234}
    with pytest.raises(V.GCMapWalkError, match="0x1234 at 0x1000"):
        V.walk_gcmap_frames(memory.__getitem__, 0x1000, [], stop=0)
    assert V.walk_gcmap_frames(memory.__getitem__, 0x1000, [], stop=0x1234) == []
    pre = GCMap("f", (0x1234,), 2, 0, (), (PointKind.PRE_CALL,))
    with pytest.raises(V.GCMapWalkError, match="PreCall safe point of @f, not a PostCall"):
        V.walk_gcmap_frames(memory.__getitem__, 0x1000, [pre], stop=0)
    both = GCMap("f", (0x1234, 0x1234), 1, 0, (0,), (PointKind.PRE_CALL, PointKind.POST_CALL))
    memory.update({0x1008: 0xAB, 0x1010: 0})
    (frame,) = V.walk_gcmap_frames(memory.__getitem__, 0x1000, [both], stop=0)
    assert frame.roots == ((0x1008, 0xAB),) and frame.kind is PointKind.POST_CALL


# ------------------------------------------------------------------ cards


def test_card_arithmetic():
    assert V.card_of(LB.HEAP_BASE) == 0 and V.card_of(LB.HEAP_BASE + 511) == 0 and V.card_of(LB.HEAP_BASE + 512) == 1
    assert V.card_of(LB.HEAP_BASE - 8) == LB.CARD_COUNT == V.card_of(LB.HEAP_BASE + (2 << 20))
    assert V.card_range(3) == (LB.HEAP_BASE + 1536, LB.HEAP_BASE + 2048)
    with pytest.raises(GCToyError, match="not a heap card"):
        V.card_range(LB.CARD_COUNT)


@given(st.sets(st.integers(0, LB.CARD_COUNT), max_size=20))
def test_dirty_cards_are_the_marked_bytes(marked):
    table = bytes(LB.CARD_DIRTY if i in marked else 0 for i in range(LB.CARD_COUNT + 1))
    assert V.dirty_cards(table) == sorted(marked)


def test_card_grids():
    table = bytearray(LB.CARD_COUNT + 1)
    table[1] = table[17] = table[LB.CARD_COUNT] = LB.CARD_DIRTY
    text = V.card_grid_text(bytes(table), 0, 32)
    assert text.splitlines() == [f"card    0 {LB.HEAP_BASE:#18x}  .#..............",
                                 f"card   16 {LB.HEAP_BASE + 16 * 512:#18x}  .#.............."]
    spare = V.card_grid_text(bytes(table), LB.CARD_COUNT, 1)
    assert spare.endswith("(outside the heap)  #")
    page = V.card_grid_html(bytes(table), 0, 32, labels={1: "a"})
    assert page.count("<tr>") == 2 and page.count("#37474f") == 2 and "1<br>a</td>" in page
    with pytest.raises(GCToyError, match="outside a table"):
        V.card_grid_text(bytes(table), LB.CARD_COUNT, 2)
    with pytest.raises(GCToyError, match="outside a table"):
        V.card_grid_html(bytes(table), -1, 2)
