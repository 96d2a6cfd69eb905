"""gc "ocaml" and gc "erlang": gctoy llc's frametable and .note.gc against llc-19's (format, counts, the
module symbol), and against gctoy's own frames (a running program walked with nothing but the tables)."""
from __future__ import annotations

import io
import struct
import subprocess
import sys
from pathlib import Path

import pytest
from elftools.elf.elffile import ELFFile

from gctoy.cli import main as gctoy_main
from gctoy.codegen import compile_module
from gctoy.codegen.frametables import ERLANG_SECTION, caml_symbol, emit_frametables
from gctoy.codegen.gcmap import GCMapError, function_code
from gctoy.emu import DATA_BASE, RETURN_TRAP, Machine
from gctoy.ir import parse_module
from gctoy.passes import run
from gctoy.runtime.heap import Heap

PROG = """@counter = global i64 5

declare void @llvm.gcroot(ptr, ptr)
declare ptr @gc_alloc(i64, i64)
declare void @probe(i64)

define void @inner(ptr %p) gc "GC" {
entry:
  %r = alloca ptr
  call void @llvm.gcroot(ptr %r, ptr null)
  store ptr %p, ptr %r
  call void @probe(i64 2)
  ret void
}

define i64 @leaf(i64 %n) gc "GC" {
entry:
  %m = add i64 %n, 1
  ret i64 %m
}

define i64 @plain(i64 %n) {
entry:
  call void @probe(i64 %n)
  ret i64 %n
}

define void @wide(i64 %a1, i64 %a2, i64 %a3, i64 %a4, i64 %a5, i64 %a6, i64 %a7, i64 %a8) gc "GC" {
entry:
  %r = alloca ptr
  %s = alloca ptr
  %t = alloca ptr
  call void @llvm.gcroot(ptr %r, ptr null)
  call void @llvm.gcroot(ptr %s, ptr null)
  call void @llvm.gcroot(ptr %t, ptr null)
  %x = call ptr @gc_alloc(i64 1, i64 0)
  store ptr %x, ptr %s
  call void @probe(i64 %a8)
  ret void
}

define i64 @main() gc "GC" {
entry:
  %a = alloca ptr
  %b = alloca ptr
  call void @llvm.gcroot(ptr %a, ptr null)
  call void @llvm.gcroot(ptr %b, ptr null)
  %x = call ptr @gc_alloc(i64 1, i64 0)
  store ptr %x, ptr %a
  call void @probe(i64 1)
  %y = call ptr @gc_alloc(i64 1, i64 0)
  store ptr %y, ptr %b
  call void @inner(ptr %y)
  %z = call i64 @plain(i64 7)
  ret i64 0
}
"""
REPO = Path(__file__).resolve().parents[2]
#: the functions of PROG that use the GC, in module order, and their gcroot counts
GC_FUNCTIONS = {"inner": 1, "leaf": 0, "wide": 3, "main": 2}


def prog(gc: str) -> str:
    return PROG.replace('"GC"', f'"{gc}"')


# ------------------------------------------------------------------ reading the two outputs


def directives(text: str, start: str, stop: tuple[str, ...]) -> list[tuple[str, str]]:
    """The directives after the line ``start`` up to one starting with ``stop``: (name, operand), and
    ("roots", F) for a '# live roots for F' comment; other comments dropped."""
    lines = text.splitlines()
    at = next(i for i, line in enumerate(lines) if line.strip() == start)
    out = []
    for line in lines[at + 1 :]:
        code, _, comment = line.partition("#")
        code = code.strip()
        if not code:
            if comment.strip().startswith("live roots for "):
                out.append(("roots", comment.strip().removeprefix("live roots for ")))
            continue
        if code.startswith(stop):
            break
        name, _, operand = code.partition("\t" if "\t" in code else " ")
        out.append((name, operand.strip().split(",")[0].strip()))
    return out


def frametable_of(dirs):
    """The frametable's descriptors as (function, return address operand, frame size, offsets)."""
    assert dirs[0][0] == ".short" and dirs[1][0] == ".p2align"
    count, rest, fn, out = int(dirs[0][1]), dirs[2:], None, []
    while rest:
        if rest[0][0] == "roots":
            fn, rest = rest[0][1], rest[1:]
            continue
        assert rest[0][0] == ".quad" and rest[1][0] == rest[2][0] == ".short"
        live = int(rest[2][1])
        offs = rest[3 : 3 + live]
        assert all(d == ".short" for d, _ in offs) and rest[3 + live][0] == ".p2align"
        out.append((fn, rest[0][1], int(rest[1][1]), [int(o) for _, o in offs]))
        rest = rest[4 + live :]
    assert len(out) == count
    return out


def note_gc_of(dirs):
    """The .note.gc tables as (points, frame words, arity, indexes)."""
    dirs = [d for d in dirs if d[0] != "roots"]
    out = []
    while dirs:
        assert dirs[0][0] == ".p2align" and dirs[1][0] == ".short"
        n = int(dirs[1][1])
        points = dirs[2 : 2 + n]
        assert all(d == ".long" for d, _ in points)
        size, arity, live = (int(o) for _, o in dirs[2 + n : 5 + n])
        idx = dirs[5 + n : 5 + n + live]
        assert all(d == ".short" for d, _ in idx)
        out.append(([p for _, p in points], size, arity, [int(i) for _, i in idx]))
        dirs = dirs[5 + n + live :]
    return out


def shape(dirs):
    """The directive sequence without operands (with the live-roots markers)."""
    return [(d, o) if d == "roots" else d for d, o in dirs]


def decode_frametable(data: bytes, at: int):
    """(return address, frame size, offsets) per descriptor of the table at byte ``at`` (8-aligned base)."""
    (count,) = struct.unpack_from("<H", data, at)
    pos, out = at + 2, []
    for _ in range(count):
        pos += -pos % 8
        addr, size, live = struct.unpack_from("<QHH", data, pos)
        offs = list(struct.unpack_from(f"<{live}H", data, pos + 12))
        out.append((addr, size, offs))
        pos += 12 + 2 * live
    return out, pos + (-pos % 8)


def decode_note_gc(data: bytes):
    """(points, frame words, arity, indexes) per table of a .note.gc section."""
    pos, out = 0, []
    while pos < len(data):
        pos += -pos % 8
        if pos >= len(data):
            break
        (n,) = struct.unpack_from("<H", data, pos)
        points = list(struct.unpack_from(f"<{n}I", data, pos + 2))
        pos += 2 + 4 * n
        size, arity, live = struct.unpack_from("<HHH", data, pos)
        idx = list(struct.unpack_from(f"<{live}H", data, pos + 6))
        out.append((points, size, arity, idx))
        pos += 6 + 2 * live
    return out, pos


def llc19(llvm19, text: str, tmp_path, name: str = "prog.ll", obj: bool = False):
    """llc-19's assembly (or object bytes) for ``text`` written to ``name`` and compiled from tmp_path."""
    (tmp_path / name).write_text(text)
    cmd = [str(llvm19.llc), "-mtriple=x86_64-linux-gnu", name, "-o", "-"]
    res = subprocess.run(cmd + (["-filetype=obj"] if obj else []), cwd=tmp_path, capture_output=True, check=False)
    assert res.returncode == 0, res.stderr.decode()
    return res.stdout if obj else res.stdout.decode()


def gctoy_llc(text: str, tmp_path, monkeypatch, capsys, name: str = "prog.ll") -> str:
    """``gctoy llc name`` run in tmp_path: its assembly text."""
    (tmp_path / name).write_text(text)
    monkeypatch.chdir(tmp_path)
    status = gctoy_main(["llc", name])
    out = capsys.readouterr()
    assert status == 0, out.err
    return out.out


def compiled_with_tables(text: str, module_id: str = "prog.ll"):
    module = parse_module(text, module_id)
    run(module, "verify,lower-gc-barriers,verify")
    compiled = compile_module(module)
    return compiled, emit_frametables(compiled, module_id)


def return_addresses(compiled, name: str) -> list[int]:
    return [i.address + i.size for i in function_code(compiled, name) if i.mnemonic == "call"]


def root_slots(fn) -> list[int]:
    """The frame offsets of the allocas a compiled function's ``llvm.gcroot`` calls name, in call order."""
    calls = [i for b in fn.frame.function.blocks for i in b.instructions
             if getattr(getattr(i, "callee", None), "name", None) == "llvm.gcroot"]
    return [fn.frame.alloca(c.args[0]) for c in calls]


def caml_globals(text: str) -> list[str]:
    return [line.split(None, 1)[1] for line in text.splitlines() if line.startswith("\t.globl") and "caml" in line]


# ------------------------------------------------------------------ OCaml


@pytest.mark.parametrize("name", ["prog.ll", "./prog.ll", "my-mod.v2.ll", "9lives.ll", "_x.ll", "noext"])
def test_caml_symbols_are_spelled_as_llc19_spells_them(llvm19, tmp_path, monkeypatch, capsys, name):
    ours = caml_globals(gctoy_llc(prog("ocaml"), tmp_path, monkeypatch, capsys, name))
    theirs = caml_globals(llc19(llvm19, prog("ocaml"), tmp_path, name))
    assert len(theirs) == 5 and ours == theirs


def test_caml_symbol_of_standard_input_is_llcs(llvm19, tmp_path):
    res = subprocess.run([str(llvm19.llc), "-mtriple=x86_64-linux-gnu", "-", "-o", "-"], input=prog("ocaml"),
                         capture_output=True, text=True, check=True)
    assert f'"{caml_symbol("<stdin>", "frametable")}"' in caml_globals(res.stdout)
    ours = subprocess.run([sys.executable, "-m", "gctoy", "llc", "-"], input=prog("ocaml"), cwd=REPO,
                          capture_output=True, text=True, check=False)
    assert ours.returncode == 0, ours.stderr
    assert caml_globals(ours.stdout) == caml_globals(res.stdout)


def test_ocaml_frametable_agrees_with_llc19(llvm19, tmp_path, monkeypatch, capsys):
    stop = (".section", ".text")
    text = gctoy_llc(prog("ocaml"), tmp_path, monkeypatch, capsys)
    ours = directives(text, "camlProg__frametable:", stop)
    theirs = directives(llc19(llvm19, prog("ocaml"), tmp_path), "camlProg__frametable:", stop)
    # the same directives in the same order: one descriptor per call llc finds, the same live counts
    assert shape(ours) == shape(theirs)
    mine, llcs = frametable_of(ours), frametable_of(theirs)
    assert [(f, len(o)) for f, _, _, o in mine] == [(f, len(o)) for f, _, _, o in llcs]
    assert [f for f, *_ in mine] == ["inner", "wide", "wide"] + ["main"] * 5
    assert all(a.startswith(".Ltmp") for _, a, _, _ in llcs)
    # gctoy's values describe gctoy's frames: its return addresses, its frame size, its root slots
    compiled, _ = compiled_with_tables(prog("ocaml"))
    fns = {f.name: f for f in compiled.functions}
    for name in GC_FUNCTIONS:
        rows = [(int(a, 0), s, o) for f, a, s, o in mine if f == name]
        fn = fns[name]
        assert [a for a, _, _ in rows] == return_addresses(compiled, name)
        assert len(root_slots(fn)) == GC_FUNCTIONS[name]
        assert all(s == fn.frame.stack_size and o == root_slots(fn) for _, s, o in rows)


def test_ocaml_image_data_is_laid_out_like_llc19s_object(llvm19, tmp_path):
    elf = ELFFile(io.BytesIO(llc19(llvm19, prog("ocaml"), tmp_path, obj=True)))
    syms = {s.name: s["st_value"] for s in elf.get_section_by_name(".symtab").iter_symbols()}
    data = elf.get_section_by_name(".data").data()
    theirs, end = decode_frametable(data, syms["camlProg__frametable"])
    assert end == len(data) and syms["camlProg__frametable"] == syms["camlProg__data_end"] + 8
    assert syms["camlProg__code_end"] == elf.get_section_by_name(".text").data_size
    assert syms["camlProg__data_begin"] <= syms["counter"] < syms["camlProg__data_end"]
    compiled, out = compiled_with_tables(prog("ocaml"))
    image = out.image
    at = image.address_of("camlProg__frametable") - DATA_BASE
    ours, end = decode_frametable(image.data, at)
    assert end == len(image.data)
    assert image.data[at - 8 : at] == bytes(8) and image.address_of("camlProg__data_end") == DATA_BASE + at - 8
    assert image.address_of("camlProg__data_begin") <= image.address_of("counter") < DATA_BASE + at - 8
    assert image.address_of("camlProg__data_begin") == DATA_BASE
    assert image.address_of("camlProg__code_begin") == image.code_base
    assert image.address_of("camlProg__code_end") == image.code_base + len(image.code)
    assert [len(o) for _, _, o in ours] == [len(o) for _, _, o in theirs]
    assert len(image.data) - at == len(data) - syms["camlProg__frametable"]
    assert [(a, s, o) for a, s, o in ours] == [(d.return_address, d.frame_size, list(d.live_offsets))
                                               for d in out.descriptors]


# ------------------------------------------------------------------ Erlang


def test_erlang_note_gc_agrees_with_llc19(llvm19, tmp_path, monkeypatch, capsys):
    start, stop = '\t.section\t.note.gc,"",@progbits', (".section", ".text")
    text = gctoy_llc(prog("erlang"), tmp_path, monkeypatch, capsys)
    ours = directives(text, start.strip(), stop)
    theirs = directives(llc19(llvm19, prog("erlang"), tmp_path), start.strip(), stop)
    assert shape([d for d in ours if d[0] != "roots"]) == shape(theirs)
    mine, llcs = note_gc_of(ours), note_gc_of(theirs)
    assert len(mine) == len(llcs) == len(GC_FUNCTIONS)
    for (p, _, arity, idx), (lp, _, larity, lidx) in zip(mine, llcs):
        assert (len(p), arity, len(idx)) == (len(lp), larity, len(lidx))
    assert [arity for _, _, arity, _ in mine] == [0, 0, 2, 0]
    compiled, out = compiled_with_tables(prog("erlang"))
    fns = {f.name: f for f in compiled.functions}
    for (points, words, _, idx), name in zip(mine, GC_FUNCTIONS):
        fn = fns[name]
        assert [int(a, 0) for a in points] == return_addresses(compiled, name)
        assert words * 8 == fn.frame.stack_size and [8 * i for i in idx] == root_slots(fn)
    # the image's section holds what the text says, laid out as llc's object lays it out
    section, end = decode_note_gc(out.image.sections[ERLANG_SECTION])
    assert end == len(out.image.sections[ERLANG_SECTION])
    assert section == [([int(a, 0) for a in p], w, a, i) for p, w, a, i in mine]
    elf = ELFFile(io.BytesIO(llc19(llvm19, prog("erlang"), tmp_path, obj=True)))
    raw = elf.get_section_by_name(".note.gc").data()
    assert len(raw) == len(out.image.sections[ERLANG_SECTION])
    assert [(len(p), a, len(i)) for p, _, a, i in decode_note_gc(raw)[0]] == [(len(p), a, len(i)) for p, _, a, i in section]


# ------------------------------------------------------------------ both


def test_each_printer_describes_only_its_own_functions(llvm19, tmp_path, monkeypatch, capsys):
    text = prog("ocaml").replace('@inner(ptr %p) gc "ocaml"', '@inner(ptr %p) gc "erlang"')
    text = text.replace('@leaf(i64 %n) gc "ocaml"', '@leaf(i64 %n) gc "erlang"')
    stop = (".section", ".text")
    ours, theirs = gctoy_llc(text, tmp_path, monkeypatch, capsys), llc19(llvm19, text, tmp_path)
    for t in (ours, theirs):
        assert [f for f, *_ in frametable_of(directives(t, "camlProg__frametable:", stop))] == ["wide"] * 2 + ["main"] * 5
        tables = note_gc_of(directives(t, '.section\t.note.gc,"",@progbits', stop))
        assert [(len(p), len(i)) for p, _, _, i in tables] == [(1, 1), (0, 0)]


def test_other_strategies_get_neither_table(tmp_path, monkeypatch, capsys):
    text = gctoy_llc(prog("gctoy-gcmap"), tmp_path, monkeypatch, capsys)
    assert "__gcmap_main:" in text and "caml" not in text and ".note.gc" not in text


@pytest.mark.parametrize("gc", ["ocaml", "erlang"])
def test_the_tables_walk_a_running_program(gc):
    compiled, out = compiled_with_tables(prog(gc))
    image = out.image
    if gc == "ocaml":
        at = image.address_of("camlProg__frametable") - DATA_BASE
        table = {a: (s, o) for a, s, o in decode_frametable(image.data, at)[0]}
    else:
        table = {a: (8 * w, [8 * i for i in idx])
                 for pts, w, _, idx in decode_note_gc(image.sections[ERLANG_SECTION])[0] for a in pts}
    machine = Machine(image, heap_size=0x20000)
    heap = Heap(machine, 0x10000)
    allocated: list[int] = []
    seen: dict[int, list[list[int]]] = {}

    def gc_alloc(nfields: int, mask: int) -> int:
        allocated.append(heap.alloc(nfields, mask))
        return allocated[-1]

    def probe(tag: int) -> None:
        if tag not in (1, 2):
            return
        frames, sp = [], machine.sp
        ret = machine.read_u64(sp)
        while ret != RETURN_TRAP:
            size, offsets = table[ret]  # every return address on the stack is a safe point of the table
            rsp = sp + 8
            frames.append([machine.read_u64(rsp + off) for off in offsets])
            sp = rsp + size
            ret = machine.read_u64(sp)
        seen[tag] = frames

    machine.register_native("gc_alloc", gc_alloc)
    machine.register_native("probe", probe)
    assert machine.call("main") == 0
    x, y = allocated
    assert seen[1] == [[x, 0]]  # b still holds the null gc-lowering stored
    assert seen[2] == [[y], [x, y]]


def test_a_frame_too_large_for_the_ocaml_table_is_refused(llvm19, tmp_path, monkeypatch, capsys):
    text = """declare void @llvm.gcroot(ptr, ptr)
declare void @probe(i64)

define void @big() gc "ocaml" {
entry:
  %r = alloca ptr
  %pad = alloca [9000 x i64]
  call void @llvm.gcroot(ptr %r, ptr null)
  call void @probe(i64 0)
  ret void
}
"""
    (tmp_path / "big.ll").write_text(text)
    res = subprocess.run([str(llvm19.llc), "-mtriple=x86_64-linux-gnu", "big.ll", "-o", "-"], cwd=tmp_path,
                         capture_output=True, text=True, check=False)
    assert res.returncode != 0 and "too large for the ocaml GC" in res.stderr
    monkeypatch.chdir(tmp_path)
    assert gctoy_main(["llc", "big.ll"]) == 1
    err = capsys.readouterr().err
    assert "big.ll:4:1: error: @big: frame size" in err and "16 bits" in err and "Traceback" not in err
    with pytest.raises(GCMapError):
        compiled_with_tables(text)


def test_a_tail_call_gctoy_lowers_as_a_call_is_a_safe_point(llvm19, tmp_path, monkeypatch, capsys):
    text = """declare i64 @foo(i64)

define i64 @f(i64 %x) gc "ocaml" {
entry:
  %r = tail call i64 @foo(i64 %x)
  ret i64 %r
}
"""
    stop = (".section", ".text")
    theirs = llc19(llvm19, text, tmp_path)
    assert "jmp\tfoo@PLT" in theirs and frametable_of(directives(theirs, "camlProg__frametable:", stop)) == []
    ours = gctoy_llc(text, tmp_path, monkeypatch, capsys)
    compiled, _ = compiled_with_tables(text)
    rows = frametable_of(directives(ours, "camlProg__frametable:", stop))
    assert [int(a, 0) for _, a, _, _ in rows] == return_addresses(compiled, "f") != []
