"""lower-gc-barriers: LLVM 14's default lowering (diffed against llc's gc-lowering), card marking and the
read barrier (verified by LLVM 14 and run on Unicorn)."""
from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gctoy.cli import main as gctoy_main
from gctoy.errors import GCToyError
from gctoy.ir import parse_module, print_module
from gctoy.ir.printer import uses_opaque_pointers
from gctoy.passes import lower_barriers as LB
from gctoy.passes import run
from gctoy.runtime.run import Runtime, load_compiled, run_module
from gctoy.llvm_tools import run_tool

DECLS = """declare void @llvm.gcroot(i8**, i8*)
declare i8* @llvm.gcread(i8*, i8**)
declare void @llvm.gcwrite(i8*, i8*, i8**)
declare void @g()
"""

BODY = """define i8* @f(i8* %obj, i8** %fld, i8* %v) gc "{gc}" {{
entry:
  %r = alloca i8*, align 8
  %x = alloca i32*, align 8
  %c = bitcast i32** %x to i8**
  call void @llvm.gcroot(i8** %r, i8* null)
  call void @llvm.gcroot(i8** %c, i8* null)
  call void @llvm.gcwrite(i8* %v, i8* %obj, i8** %fld)
  %l = call i8* @llvm.gcread(i8* %obj, i8** %fld)
  %0 = call i8* @llvm.gcread(i8* %obj, i8** %fld)
  call void @g()
  ret i8* %l
}}
"""


def lowered(text: str) -> str:
    m = parse_module(text, "t.ll")
    run(m, "verify,lower-gc-barriers,verify")
    return print_module(m, opaque=uses_opaque_pointers(m))


def function_text(text: str, name: str) -> str:
    m = re.search(rf"^define [^\n]*@{name}\(.*?^}}", text, re.M | re.S)
    assert m, text
    return m.group(0)


def opt_normalise(llvm14, text: str, extra: tuple[str, ...] = ()) -> str:
    res = run_tool(llvm14.opt, [*extra, "-passes=verify", "-S", "-o", "-"], text)
    assert res.returncode == 0, res.stderr + text
    return res.stdout


# ------------------------------------------------------------------ the default lowering


def test_default_lowering_text():
    out = function_text(lowered(DECLS + BODY.format(gc="ocaml")), "f")
    assert "llvm.gcread" not in out and "llvm.gcwrite" not in out
    assert "store i8* %v, i8** %fld, align 8" in out
    assert "%l = load i8*, i8** %fld, align 8" in out
    assert "store i8* null, i8** %r, align 8" in out
    assert "store i32* null, i32** %x, align 8" in out
    assert out.count("call void @llvm.gcroot") == 2  # roots stay for the code generator


@pytest.mark.parametrize("gc", ["ocaml", "erlang", "statepoint-example"])
def test_default_lowering_equals_llc14_gc_lowering(llvm14, gc):
    src = DECLS + BODY.format(gc=gc)
    mir = run_tool(llvm14.llc, ["-O0", "-stop-after=gc-lowering", "-o", "-"], src)
    assert mir.returncode == 0, mir.stderr
    ir = mir.stdout.split("--- |", 1)[1].split("\n...", 1)[0]
    theirs = function_text("\n".join(line[2:] for line in ir.splitlines()), "f")
    ours = function_text(opt_normalise(llvm14, lowered(src)), "f")
    assert ours == theirs


LATE_ROOTS = """define i8* @h(i8* %obj, i8** %fld, i8* %v, i1 %c) gc "{gc}" {{
entry:
  %r = alloca i8*, align 8
  %s = alloca i8*, align 8
  %t = alloca i8*, align 8
  call void @llvm.gcroot(i8** %r, i8* null)
  store i8* %v, i8** %t
  %n = add i32 1, 2
  br i1 %c, label %late, label %done
late:
  call void @llvm.gcroot(i8** %s, i8* null)
  call void @llvm.gcroot(i8** %t, i8* null)
  call void @llvm.gcwrite(i8* %v, i8* %obj, i8** %s)
  call void @g()
  br label %done
done:
  %l = call i8* @llvm.gcread(i8* %obj, i8** %fld)
  ret i8* %l
}}
"""


@pytest.fixture(params=[14, 19], ids=lambda v: f"llvm{v}")
def llvm(request):
    """LLVM 14, then LLVM 19 (each skipped where it is not installed)."""
    return request.getfixturevalue(f"llvm{request.param}")


@pytest.mark.parametrize("gc", ["shadow-stack", "ocaml", "statepoint-example"])
def test_every_root_is_stored_null_as_llc_gc_lowering_does(llvm, gc):
    """Roots of shadow-stack functions too, and roots named outside the entry block (their alloca is in it)."""
    src = DECLS + LATE_ROOTS.format(gc=gc)
    opaque = llvm.version >= 15
    if opaque:
        src = print_module(parse_module(src), opaque=True)
    mir = run_tool(llvm.llc, ["-O0", "-stop-after=gc-lowering", "-o", "-"], src)
    assert mir.returncode == 0, mir.stderr
    ir = mir.stdout.split("--- |", 1)[1].split("\n...", 1)[0]
    theirs = function_text("\n".join(line[2:] for line in ir.splitlines()), "h")
    assert theirs.count("store ptr null" if opaque else "store i8* null") == 2  # %r and %s; %t is stored to
    m = parse_module(src)
    run(m, "verify,lower-gc-barriers")  # a gcroot outside the entry block is valid IR, for LLVM and gctoy
    res = run_tool(llvm.opt, ["-passes=verify", "-S", "-o", "-"], print_module(m, opaque=opaque))
    assert res.returncode == 0, res.stderr
    assert function_text(res.stdout, "h") == theirs


def test_existing_initialisation_is_kept():
    src = DECLS + """define void @f() gc "ocaml" {
entry:
  %r = alloca i8*
  store i8* null, i8** %r
  call void @llvm.gcroot(i8** %r, i8* null)
  ret void
}
"""
    assert function_text(lowered(src), "f").count("store i8* null") == 1


def test_functions_without_gc_and_modules_without_barriers_are_untouched():
    src = DECLS + "define void @h() {\nentry:\n  call void @g()\n  ret void\n}\n"
    assert lowered(src) == print_module(parse_module(src))


def test_unknown_gc_is_an_error():
    src = DECLS + 'define void @h() gc "nope" {\nentry:\n  ret void\n}\n'
    with pytest.raises(GCToyError, match="unsupported GC: 'nope'"):
        run(parse_module(src), "lower-gc-barriers")


def test_clashing_card_table_global_is_an_error():
    src = DECLS + "@gctoy_card_table = global i32 0\n" + BODY.format(gc="gctoy-cardmark")
    with pytest.raises(LB.BarrierLoweringError, match="gctoy_card_table"):
        run(parse_module(src), "lower-gc-barriers")


def test_constants_agree_with_the_runtime():
    from gctoy.emu.image import HEAP_BASE
    from gctoy.runtime import heap

    assert LB.HEAP_BASE == HEAP_BASE
    assert (LB.DEFAULT_SEMISPACE, LB.WORD, LB.OBJECT_TAG) == (heap.DEFAULT_SEMISPACE, heap.WORD, heap.OBJECT_TAG)
    assert LB.CARD_COUNT << LB.CARD_SHIFT == 2 * heap.DEFAULT_SEMISPACE


# ------------------------------------------------------------------ custom barriers: LLVM accepts them


@pytest.mark.parametrize("gc", ["gctoy-cardmark", "gctoy-readbarrier"])
def test_custom_lowering_verifies_with_llvm14_typed(llvm14, gc):
    out = lowered(DECLS + BODY.format(gc=gc))
    f = function_text(out, "f")
    assert "@llvm.gcread(" not in f and "@llvm.gcwrite(" not in f
    opt_normalise(llvm14, out)


@pytest.mark.parametrize("gc", ["gctoy-cardmark", "gctoy-readbarrier", "ocaml"])
def test_custom_lowering_of_opaque_ir_verifies_with_llvm14(llvm14, gc):
    src = """declare ptr @llvm.gcread(ptr, ptr)
declare void @llvm.gcwrite(ptr, ptr, ptr)
define ptr @f(ptr %obj, ptr %fld, ptr %v) gc "GC" {
entry:
  call void @llvm.gcwrite(ptr %v, ptr %obj, ptr %fld)
  %l = call ptr @llvm.gcread(ptr %obj, ptr %fld)
  ret ptr %l
}
""".replace("GC", gc)
    out = lowered(src)
    f = function_text(out, "f")
    assert "@llvm.gcread(" not in f and "*" not in f  # still opaque: no typed pointer crept in
    opt_normalise(llvm14, out, ("-opaque-pointers",))


def test_cardmark_text_names_the_card():
    out = lowered(DECLS + BODY.format(gc="gctoy-cardmark"))
    f = function_text(out, "f")
    assert "%card.off = sub i64 %card.addr, 268435456" in f
    assert "%card.idx = lshr i64 %card.off, 9" in f
    assert "store i8 1, i8* %card, align 1" in f
    assert "@gctoy_card_table = global [4097 x i8] zeroinitializer" in out
    assert "%l = load i8*, i8** %fld, align 8" in f  # reads keep LLVM's default lowering


def test_readbarrier_keeps_names_and_default_writes():
    f = function_text(lowered(DECLS + BODY.format(gc="gctoy-readbarrier")), "f")
    assert "%l.ref = load i8*, i8** %fld, align 8" in f
    assert re.search(r"^  %l = select i1 %l\.moved, i8\* %l\.fwd, i8\* %l\.ref$", f, re.M)
    assert "%rb.ref = load" in f  # the unnamed gcread gets a base name; its result stays numbered
    assert "store i8* %v, i8** %fld, align 8" in f


OPS = st.lists(st.sampled_from(["read", "write"]), min_size=1, max_size=6)


@settings(max_examples=30, deadline=None)
@given(ops=OPS, gc=st.sampled_from(["ocaml", "gctoy-cardmark", "gctoy-readbarrier", "shadow-stack"]))
def test_lowered_output_verifies_and_has_no_barriers(ops, gc):
    lines = []
    for i, op in enumerate(ops):
        if op == "read":
            lines.append(f"  %r{i} = call i8* @llvm.gcread(i8* %obj, i8** %fld)")
        else:
            lines.append("  call void @llvm.gcwrite(i8* %v, i8* %obj, i8** %fld)")
    src = DECLS + f'define void @f(i8* %obj, i8** %fld, i8* %v) gc "{gc}" {{\nentry:\n' + "\n".join(lines) + \
        "\n  ret void\n}\n"
    m = parse_module(src)
    run(m, "lower-gc-barriers,verify")
    body = function_text(print_module(m), "f")
    assert "@llvm.gcread" not in body and "@llvm.gcwrite" not in body
    once = print_module(m)
    run(m, "lower-gc-barriers")
    assert print_module(m) == once


def test_cli_opt_runs_the_pass(tmp_path, capsys):
    path = tmp_path / "in.ll"
    path.write_text(DECLS + BODY.format(gc="gctoy-cardmark"))
    assert gctoy_main(["opt", "-passes=lower-gc-barriers", "-S", str(path)]) == 0
    assert "@gctoy_card_table" in capsys.readouterr().out


# ------------------------------------------------------------------ running the barriers on Unicorn

RUNTIME_DECLS = """declare i8* @gc_alloc(i64, i64)
declare void @print_i64(i64)
declare i8* @llvm.gcread(i8*, i8**)
declare void @llvm.gcwrite(i8*, i8*, i8**)
"""

CARDMARK_PROGRAM = RUNTIME_DECLS + """@outside = global [2 x i8*] zeroinitializer

define i64 @main() gc "gctoy-cardmark" {
entry:
  %a = call i8* @gc_alloc(i64 2, i64 3)
  %pad = call i8* @gc_alloc(i64 100, i64 0)
  %b = call i8* @gc_alloc(i64 2, i64 3)
  %pad2 = call i8* @gc_alloc(i64 200, i64 0)
  %c = call i8* @gc_alloc(i64 1, i64 1)
  %a.f1 = getelementptr i8, i8* %a, i64 8
  %a.f1p = bitcast i8* %a.f1 to i8**
  call void @llvm.gcwrite(i8* %b, i8* %a, i8** %a.f1p)
  %b.f0 = bitcast i8* %b to i8**
  call void @llvm.gcwrite(i8* %a, i8* %b, i8** %b.f0)
  %g = bitcast [2 x i8*]* @outside to i8*
  %g.f0 = bitcast [2 x i8*]* @outside to i8**
  call void @llvm.gcwrite(i8* %c, i8* %g, i8** %g.f0)
  %ai = ptrtoint i8* %a to i64
  call void @print_i64(i64 %ai)
  %bi = ptrtoint i8* %b to i64
  call void @print_i64(i64 %bi)
  %ci = ptrtoint i8* %c to i64
  call void @print_i64(i64 %ci)
  %back = load i8*, i8** %a.f1p
  %backi = ptrtoint i8* %back to i64
  call void @print_i64(i64 %backi)
  %out = load i8*, i8** %g.f0
  %outi = ptrtoint i8* %out to i64
  call void @print_i64(i64 %outi)
  ret i64 0
}
"""


def run_lowered(text: str) -> tuple[Runtime, list[int]]:
    m = parse_module(text, "prog.ll")
    run(m, "verify,lower-gc-barriers,verify")
    runtime = Runtime(load_compiled(m), gc="none")
    result = runtime.run()
    return runtime, result.printed


def test_card_marking_program_runs_and_dirties_exactly_the_written_cards():
    runtime, printed = run_lowered(CARDMARK_PROGRAM)
    a, b, c, back, out = printed
    assert back == b and out == c  # the stores happened
    table = runtime.machine.read(runtime.loaded.image.address_of(LB.CARD_TABLE), LB.CARD_COUNT + 1)

    def card(addr: int) -> int:
        return (addr - LB.HEAP_BASE) >> LB.CARD_SHIFT

    assert len({card(a), card(b), card(c)}) == 3  # the padding objects keep them apart
    dirty = {i for i, byte in enumerate(table) if byte}
    assert dirty == {card(a), card(b), LB.CARD_COUNT}  # a global's write marks the overflow card
    assert all(table[i] == LB.CARD_DIRTY for i in dirty)


READBARRIER_PROGRAM = RUNTIME_DECLS + """
define i64 @main() gc "gctoy-readbarrier" {
entry:
  %h = call i8* @gc_alloc(i64 2, i64 3)
  %a = call i8* @gc_alloc(i64 1, i64 0)
  %b = call i8* @gc_alloc(i64 1, i64 0)
  %a64 = bitcast i8* %a to i64*
  store i64 7, i64* %a64
  %b64 = bitcast i8* %b to i64*
  store i64 42, i64* %b64
  %h0 = bitcast i8* %h to i8**
  store i8* %a, i8** %h0
  %r1 = call i8* @llvm.gcread(i8* %h, i8** %h0)
  %r1p = bitcast i8* %r1 to i64*
  %r1v = load i64, i64* %r1p
  call void @print_i64(i64 %r1v)
  ; what a copying collector leaves behind: a's header word now holds b's address (tag bit 0)
  %ahdr = getelementptr i8, i8* %a, i64 -8
  %ahdrp = bitcast i8* %ahdr to i64*
  %bi = ptrtoint i8* %b to i64
  store i64 %bi, i64* %ahdrp
  %r2 = call i8* @llvm.gcread(i8* %h, i8** %h0)
  %r2p = bitcast i8* %r2 to i64*
  %r2v = load i64, i64* %r2p
  call void @print_i64(i64 %r2v)
  %r2i = ptrtoint i8* %r2 to i64
  %same = icmp eq i64 %r2i, %bi
  %samei = zext i1 %same to i64
  call void @print_i64(i64 %samei)
  %h1 = getelementptr i8, i8* %h, i64 8
  %h1p = bitcast i8* %h1 to i8**
  %r3 = call i8* @llvm.gcread(i8* %h, i8** %h1p)
  %r3i = ptrtoint i8* %r3 to i64
  call void @print_i64(i64 %r3i)
  ret i64 0
}
"""


def test_read_barrier_program_follows_the_forwarding_word():
    _, printed = run_lowered(READBARRIER_PROGRAM)
    assert printed == [7, 42, 1, 0]  # unmoved object, forwarded object, to b itself, null stays null


def test_read_barrier_program_through_run_module():
    m = parse_module(READBARRIER_PROGRAM, "prog.ll")
    run(m, "lower-gc-barriers")
    assert run_module(m).printed == [7, 42, 1, 0]


def test_read_barrier_program_without_the_barrier_reads_the_stale_copy():
    _, printed = run_lowered(READBARRIER_PROGRAM.replace("gctoy-readbarrier", "ocaml"))
    assert printed == [7, 7, 0, 0]
