"""Safe point kinds on compiled code and the seed's ``__gcmap_<function>`` tables (layout, quirks, a frame walk)."""
from __future__ import annotations

import re
import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gctoy.cli import main as gctoy_main
from gctoy.codegen import CodegenError, compile_module
from gctoy.codegen.gcmap import (
    ADDRESS_SIZE,
    GCMap,
    GCMapError,
    classify,
    compile_with_gcmaps,
    decode_gcmap,
    emit_gcmaps,
    function_code,
    parse_gcmap,
    read_gcmap,
    safe_points,
)
from gctoy.emu import DATA_BASE, RETURN_TRAP, Machine, assemble
from gctoy.errors import DecodeError
from gctoy.ir import parse_module
from gctoy.passes import run
from gctoy.runtime.heap import Heap
from gctoy.strategy import ALL_POINT_KINDS, GCStrategy, PointKind, register_strategy, unregister_strategy

DECLS = """declare void @llvm.gcroot(i8**, i8*)
declare void @print_i64(i64)
declare i8* @gc_alloc(i64, i64)
declare void @probe(i64)
"""

LOOPS = DECLS + """
define i64 @nested(i64 %n) gc "gctoy-gcmap" {
entry:
  br label %outer
outer:
  %i = phi i64 [ 0, %entry ], [ %i1, %outer.latch ]
  br label %inner
inner:
  %j = phi i64 [ 0, %outer ], [ %j1, %inner ]
  call void @print_i64(i64 %j)
  %j1 = add i64 %j, 1
  %jc = icmp ult i64 %j1, %n
  br i1 %jc, label %inner, label %outer.latch
outer.latch:
  %i1 = add i64 %i, 1
  %ic = icmp ult i64 %i1, %n
  br i1 %ic, label %outer, label %exit
exit:
  ret i64 %i1
}

define i64 @branchy(i64 %x) gc "gctoy-gcmap" {
entry:
  %c = icmp eq i64 %x, 0
  br i1 %c, label %zero, label %other
zero:
  call void @print_i64(i64 1)
  call void @print_i64(i64 2)
  ret i64 0
other:
  ret i64 %x
}

define void @stuck() gc "gctoy-gcmap" {
entry:
  %r = alloca i8*
  call void @llvm.gcroot(i8** %r, i8* null)
  unreachable
}
"""


@pytest.fixture(scope="module")
def loops():
    m = parse_module(LOOPS, "loops.ll")
    run(m, "verify,lower-gc-barriers")
    return compile_module(m)


def by_kind(points, kind):
    return [p for p in points if p.kind is kind]


def test_kinds_match_the_disassembly(loops):
    insns = {i.address: i for i in function_code(loops, "nested")}
    points = safe_points(loops, "nested", ALL_POINT_KINDS)
    for p in by_kind(points, PointKind.PRE_CALL):
        assert insns[p.address].mnemonic == "call"
    for p in by_kind(points, PointKind.POST_CALL):
        call = [i for i in insns.values() if i.mnemonic == "call" and i.address + i.size == p.address]
        assert len(call) == 1 and p.address in insns  # the return address is the next instruction
    for p in by_kind(points, PointKind.RETURN):
        assert insns[p.address].mnemonic == "ret"
    for p in by_kind(points, PointKind.LOOP):
        insn = insns[p.address]
        assert insn.mnemonic.startswith("j") and int(insn.op_str, 16) <= insn.address
    counts = {k: len(by_kind(points, k)) for k in PointKind}
    assert counts == {PointKind.LOOP: 2, PointKind.RETURN: 1, PointKind.PRE_CALL: 1, PointKind.POST_CALL: 1}
    assert [p.address for p in points] == sorted(p.address for p in points)


def test_forward_branches_are_not_loops(loops):
    points = safe_points(loops, "branchy", ALL_POINT_KINDS)
    assert by_kind(points, PointKind.LOOP) == []
    assert len(by_kind(points, PointKind.RETURN)) == 2
    assert len(by_kind(points, PointKind.PRE_CALL)) == len(by_kind(points, PointKind.POST_CALL)) == 2
    jumps = [i for i in function_code(loops, "branchy") if i.mnemonic.startswith("j")]
    assert jumps  # there are branches, all forward


OCAMLISH = DECLS + """define i64 @ocamlish(i64 %x) gc "ocaml" {
entry:
  call void @print_i64(i64 %x)
  ret i64 %x
}
"""


def test_the_strategy_chooses_the_kinds(loops):
    ocaml = compile_module(parse_module(OCAMLISH))
    assert [p.kind for p in safe_points(ocaml, "ocamlish")] == [PointKind.POST_CALL]
    assert {p.kind for p in safe_points(loops, "nested")} == set(PointKind)
    assert classify(function_code(loops, "nested"), {PointKind.RETURN})[0].instruction == "ret"


def test_postcall_points_are_the_stackmap_return_addresses():
    src = """declare void @print_i64(i64)
define i64 @main() gc "statepoint-example" {
entry:
  call void @print_i64(i64 1)
  call void @print_i64(i64 2)
  ret i64 0
}
"""
    m = parse_module(src)
    run(m, "rewrite-statepoints-for-gc")
    compiled = compile_module(m)
    (fn,) = compiled.functions
    labels = [compiled.image.address_of(label) for label in fn.statepoint_labels]
    post = [p.address for p in safe_points(compiled, "main", {PointKind.POST_CALL})]
    assert len(labels) == 2 and post == labels
    assert [r.instruction_offset + fn.address for r in compiled.stackmap.records] == post


# ------------------------------------------------------------------ the table


def test_table_layout_and_quirks(loops):
    out = emit_gcmaps(loops)
    nested = read_gcmap(out.image, "nested")
    fn = next(f for f in loops.functions if f.name == "nested")
    assert nested.safe_points == tuple(p.address for p in safe_points(loops, "nested"))
    assert nested.frame_size_words * 8 == fn.frame.stack_size
    raw = nested.to_bytes()
    # quirk 1: four bytes per safe point address although the target is 64-bit
    assert len(raw) == 4 + ADDRESS_SIZE * len(nested.safe_points) + 12 + 4 * len(nested.live_offsets)
    assert ADDRESS_SIZE == 4
    assert struct.unpack_from("<I", raw, 4)[0] == nested.safe_points[0]


def test_live_offsets_are_bytes_from_rsp_not_word_indices(loops):
    out = emit_gcmaps(loops)
    stuck = read_gcmap(out.image, "stuck")
    fn = next(f for f in loops.functions if f.name == "stuck")
    (offset, _meta) = fn.gc_roots[0]
    assert stuck.live_offsets == (offset,)
    m = parse_module(DECLS + """define void @two() gc "gctoy-gcmap" {
entry:
  %a = alloca i8*
  %b = alloca i8*
  call void @llvm.gcroot(i8** %a, i8* null)
  call void @llvm.gcroot(i8** %b, i8* null)
  ret void
}
""")
    (table,) = compile_with_gcmaps(m)[1].maps
    assert table.live_offsets == (0, 8)  # quirk 2: byte offsets (an index would say 0, 1)


def test_roots_are_listed_without_any_safe_point(loops):
    stuck = read_gcmap(emit_gcmaps(loops).image, "stuck")
    assert stuck.safe_points == () and len(stuck.live_offsets) == 1  # quirk 4


@pytest.mark.parametrize("nargs,arity", [(0, 0), (6, 0), (7, 1), (9, 3)])
def test_stack_arity_counts_arguments_beyond_six_registers(nargs, arity):
    params = ", ".join(f"i64 %a{i}" for i in range(nargs))
    m = parse_module(f'define void @f({params}) gc "gctoy-gcmap" {{\nentry:\n  ret void\n}}\n')
    (table,) = compile_with_gcmaps(m)[1].maps
    assert table.stack_arity == arity  # quirk 3: 6 register arguments on x86-64, not the seed's 5


def test_address_that_does_not_fit_four_bytes_is_refused():
    with pytest.raises(GCMapError, match="does not fit"):
        GCMap("f", (1 << 32,), 2, 0, ()).to_bytes()
    wide = GCMap("f", (1 << 32,), 2, 0, (8,))
    assert parse_gcmap(wide.to_bytes(8), address_size=8, function="f") == wide


def test_image_data_keeps_its_globals_and_aligns_each_table(loops):
    out = emit_gcmaps(loops)
    assert out.image.data[:len(loops.image.data)] == loops.image.data
    for table in out.maps:
        address = out.image.address_of(table.symbol)
        assert address % 8 == 0 and address >= DATA_BASE + len(loops.image.data)
        assert read_gcmap(out.image, table.function) == table
    assert [t.function for t in out.maps] == ["nested", "branchy", "stuck"]


def test_printed_text_assembles_to_the_table_bytes(loops):
    out = emit_gcmaps(loops)
    for table in out.maps:
        body = table.assembly().split("\n", 1)[1]
        text = "\n".join(line.split("#")[0].strip() for line in body.splitlines())
        assert assemble(text, base=DATA_BASE) == table.to_bytes()
    assert "stack frame size (in words)" in out.text and "bytes from rsp" in out.text


@pytest.fixture
def printerless():
    """A registered strategy that asks for metadata gctoy has no printer for."""
    register_strategy(GCStrategy("toy-printerless", needed_safe_points={PointKind.POST_CALL}, uses_metadata=True))
    yield "toy-printerless"
    unregister_strategy("toy-printerless")


def test_metadata_strategy_without_printer_is_an_error(printerless):
    src = OCAMLISH.replace('"ocaml"', f'"{printerless}"')
    with pytest.raises(GCMapError, match=f'no GC metadata printer for gc "{printerless}"'):
        emit_gcmaps(compile_module(parse_module(src)))


@pytest.mark.parametrize("gc", ["erlang", "ocaml"])
def test_ocaml_and_erlang_functions_get_no_gcmap_table(gc):
    out = emit_gcmaps(compile_module(parse_module(OCAMLISH.replace('"ocaml"', f'"{gc}"'))))
    assert out.maps == () and out.text == ""


@pytest.mark.parametrize("gc", ["shadow-stack", "statepoint-example"])
def test_gcroot_reaching_codegen_needs_a_frame_root_strategy(gc):
    src = DECLS + f'''define void @f() gc "{gc}" {{
entry:
  %r = alloca i8*
  call void @llvm.gcroot(i8** %r, i8* null)
  ret void
}}
'''
    with pytest.raises(CodegenError, match=f'has gc "{gc}", which keeps no roots in the frame'):
        compile_module(parse_module(src))


def test_gcroot_compiles_to_no_code():
    with_root = compile_module(parse_module(DECLS + """define void @f() gc "gctoy-gcmap" {
entry:
  %r = alloca i8*
  call void @llvm.gcroot(i8** %r, i8* null)
  ret void
}
"""))
    without = compile_module(parse_module(DECLS + """define void @f() gc "gctoy-gcmap" {
entry:
  %r = alloca i8*
  ret void
}
"""))
    assert with_root.image.code == without.image.code
    assert with_root.functions[0].gc_roots[0][0] == 0 and without.functions[0].gc_roots == ()


# ------------------------------------------------------------------ decoding


TABLES = st.builds(
    GCMap, st.just(""),
    st.lists(st.integers(0, (1 << 32) - 1), max_size=8).map(tuple),
    st.integers(0, 1 << 20), st.integers(0, 64),
    st.lists(st.integers(-(1 << 31), (1 << 31) - 1), max_size=8).map(tuple))


@given(TABLES)
def test_bytes_round_trip(table):
    assert parse_gcmap(table.to_bytes()) == table


@given(TABLES, st.data())
def test_truncated_table_reports_an_offset_inside_it(table, data):
    raw = table.to_bytes()
    cut = data.draw(st.integers(0, len(raw) - 1))
    with pytest.raises(DecodeError) as e:
        parse_gcmap(raw[:cut])
    assert 0 <= e.value.offset <= cut


def test_decode_errors_name_the_field_and_offset():
    raw = GCMap("", (0x400000,), 3, 0, (8,)).to_bytes()
    with pytest.raises(DecodeError) as e:
        parse_gcmap(raw + b"\0")
    assert e.value.offset == len(raw) and "1 bytes after" in e.value.message
    with pytest.raises(DecodeError) as e:
        parse_gcmap(struct.pack("<i", -1))
    assert e.value.offset == 0 and "negative safe point count" in e.value.message
    with pytest.raises(DecodeError) as e:
        parse_gcmap(struct.pack("<i", 1000) + bytes(8))
    assert e.value.offset == 4 and "1000 safe point addresses" in e.value.message
    bad_live = struct.pack("<iiii", 0, 2, 0, -3)
    with pytest.raises(DecodeError) as e:
        parse_gcmap(bad_live)
    assert e.value.offset == 12 and "live root count" in e.value.message
    table, end = decode_gcmap(b"\xff" * 3 + raw, 3)
    assert end == 3 + len(raw) and table.frame_size_words == 3


# ------------------------------------------------------------------ a runtime that walks frames with the tables

WALK = DECLS + """
define void @inner(i8* %p) gc "gctoy-gcmap" {
entry:
  %r = alloca i8*
  call void @llvm.gcroot(i8** %r, i8* null)
  store i8* %p, i8** %r
  call void @probe(i64 2)
  ret void
}

define i64 @main() gc "gctoy-gcmap" {
entry:
  %a = alloca i8*
  %b = alloca i8*
  call void @llvm.gcroot(i8** %a, i8* null)
  call void @llvm.gcroot(i8** %b, i8* null)
  %x = call i8* @gc_alloc(i64 1, i64 0)
  store i8* %x, i8** %a
  call void @probe(i64 1)
  %y = call i8* @gc_alloc(i64 1, i64 0)
  store i8* %y, i8** %b
  call void @inner(i8* %y)
  ret i64 0
}
"""


def test_a_stack_walk_driven_by_the_tables_finds_every_root():
    m = parse_module(WALK, "walk.ll")
    run(m, "verify,lower-gc-barriers,verify")
    _, out = compile_with_gcmaps(m)
    tables = {t.function: t for t in out.maps}
    kinds = {(t.function, a): k for t in out.maps for a, k in zip(t.safe_points, t.kinds)}
    machine = Machine(out.image, heap_size=0x20000)
    heap = Heap(machine, 0x10000)
    allocated: list[int] = []
    seen: dict[int, list[tuple[str, list[int]]]] = {}

    def gc_alloc(nfields: int, mask: int) -> int:
        allocated.append(heap.alloc(nfields, mask))
        return allocated[-1]

    def probe(tag: int) -> None:
        frames, sp = [], machine.sp
        ret = machine.read_u64(sp)
        while ret != RETURN_TRAP:
            owner = [name for (name, addr) in kinds if addr == ret]
            assert len(owner) == 1 and kinds[(owner[0], ret)] is PointKind.POST_CALL
            table = tables[owner[0]]
            rsp = sp + 8
            frames.append((owner[0], [machine.read_u64(rsp + off) for off in table.live_offsets]))
            sp = rsp + 8 * table.frame_size_words
            ret = machine.read_u64(sp)
        seen[tag] = frames

    machine.register_native("gc_alloc", gc_alloc)
    machine.register_native("probe", probe)
    assert machine.call("main") == 0
    x, y = allocated
    assert seen[1] == [("main", [x, 0])]  # b is still the null that InitRoots stored
    assert seen[2] == [("inner", [y]), ("main", [x, y])]


def test_llc_prints_the_tables(tmp_path, capsys, printerless):
    path = tmp_path / "walk.ll"
    path.write_text(WALK)
    assert gctoy_main(["llc", str(path)]) == 0
    text = capsys.readouterr().out
    assert re.search(r"^__gcmap_main:\n\s+\.long 9  # safe point count", text, re.M)
    assert "__gcmap_inner:" in text
    bad = tmp_path / "printerless.ll"
    bad.write_text(f'define void @f() gc "{printerless}" {{\nentry:\n  ret void\n}}\n')
    assert gctoy_main(["llc", str(bad)]) == 1
    assert capsys.readouterr().err.startswith(f'{bad}:1:1: error: @f: no GC metadata printer for gc "{printerless}"')
