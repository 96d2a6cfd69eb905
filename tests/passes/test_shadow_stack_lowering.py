"""shadow-stack-gc-lowering against LLVM 14 and 19 (``llc -O0 -stop-after=shadow-stack-gc-lowering``).

Each gcroot program goes through LLVM 14's ``llc`` (which runs ``gc-lowering`` then
``shadow-stack-gc-lowering``; the IR is taken from the ``--- |`` block of the MIR it
prints) and through gctoy's ``shadow-stack-gc-lowering``.  Both results are re-printed
by LLVM 14's ``opt -S`` and the ModuleID / source_filename / datalayout lines dropped.

Checked for every program:

* gctoy's output is accepted by ``opt -passes=verify``;
* **same structure**, compared field by field (so a failure says what differs):
  - the FrameMap constant ``@__gc_<F>`` of every lowered function: its type name,
    NumRoots, NumMeta and the metadata pointers (as LLVM prints them, in order);
  - the ``%gc_stackentry.<F>`` type: the root slot types in order;
  - the root indices: for every former root alloca name, the field index of the GEP
    that replaced it (metadata roots first, then the others, each in source order);
  - the entry sequence: every instruction of the entry block from ``%gc_frame`` through
    the store of ``%gc_newhead`` into ``@llvm_gc_root_chain`` (the load of the chain
    head, the map GEP and store, the root GEPs, the InitRoots null stores that land
    before the push, the push GEPs and stores), as text;
  - the exit sequences: for every block ending in ``ret`` or ``resume``, the pop
    (GEP of the next field, load of the saved head, store into the chain head) and
    the terminator, as text; the set of blocks and their names (which shows the
    call -> invoke splits and the ``gc_cleanup`` block);
* and finally the whole module text is identical.
"""
from __future__ import annotations

import re

import pytest

from gctoy.ir import parse_module, print_module
from gctoy.passes import REGISTRY, run
from gctoy.passes.shadow_stack_lowering import ShadowStackError
from gctoy.llvm_tools import run_opt, run_tool

DECLS = """
declare void @llvm.gcroot(i8**, i8*)
declare i8* @alloc() nounwind
declare void @use(i8*) nounwind
declare void @may_throw(i8*)
declare i8* @alloc_throw()
@m1 = constant i32 1
@m2 = constant i32 2
@m3 = constant [2 x i64] zeroinitializer
"""

PROGRAMS = {
    "one_root": """
define void @one() gc "shadow-stack" {
entry:
  %r = alloca i8*
  call void @llvm.gcroot(i8** %r, i8* null)
  %p = call i8* @alloc()
  store i8* %p, i8** %r
  call void @use(i8* %p)
  ret void
}
""",
    "two_roots_meta_loop": """
define i8* @loop(i64 %n) gc "shadow-stack" {
entry:
  %a = alloca i8*
  %b = alloca i8*
  call void @llvm.gcroot(i8** %a, i8* null)
  call void @llvm.gcroot(i8** %b, i8* bitcast (i32* @m1 to i8*))
  br label %head
head:
  %i = phi i64 [ 0, %entry ], [ %i1, %body ]
  %c = icmp slt i64 %i, %n
  br i1 %c, label %body, label %done
body:
  %p = call i8* @alloc()
  store i8* %p, i8** %a
  %q = load i8*, i8** %a
  store i8* %q, i8** %b
  %i1 = add i64 %i, 1
  br label %head
done:
  %r = load i8*, i8** %b
  ret i8* %r
}
""",
    "four_roots_mixed_meta": """
define void @four(i1 %c) gc "shadow-stack" {
entry:
  %w = alloca i8*
  %x = alloca i8*
  %y = alloca i8*
  %z = alloca i8*
  call void @llvm.gcroot(i8** %w, i8* null)
  call void @llvm.gcroot(i8** %x, i8* bitcast (i32* @m2 to i8*))
  call void @llvm.gcroot(i8** %y, i8* null)
  call void @llvm.gcroot(i8** %z, i8* bitcast ([2 x i64]* @m3 to i8*))
  %p = call i8* @alloc()
  store i8* %p, i8** %y
  br i1 %c, label %t, label %f
t:
  call void @use(i8* %p)
  ret void
f:
  store i8* %p, i8** %z
  ret void
}
""",
    "three_returns_switch_throwing": """
define i8* @sw(i32 %k) gc "shadow-stack" {
entry:
  %a = alloca i8*
  %b = alloca i8*
  %c = alloca i8*
  call void @llvm.gcroot(i8** %a, i8* null)
  call void @llvm.gcroot(i8** %b, i8* null)
  call void @llvm.gcroot(i8** %c, i8* null)
  %p = call i8* @alloc_throw()
  store i8* %p, i8** %a
  switch i32 %k, label %d [ i32 0, label %z
                            i32 1, label %o ]
z:
  call void @may_throw(i8* %p)
  ret i8* %p
o:
  %q = call i8* @alloc_throw()
  store i8* %q, i8** %b
  ret i8* %q
d:
  ret i8* null
}
""",
    "bitcast_slot_and_preinit": """
%obj = type { i64, %obj* }
define %obj* @bc() gc "shadow-stack" {
entry:
  %o = alloca %obj*
  %s = alloca i8*
  store %obj* null, %obj** %o
  %oc = bitcast %obj** %o to i8**
  call void @llvm.gcroot(i8** %oc, i8* null)
  call void @llvm.gcroot(i8** %s, i8* bitcast (i32* @m1 to i8*))
  %p = call i8* @alloc()
  %po = bitcast i8* %p to %obj*
  store %obj* %po, %obj** %o
  ret %obj* %po
}
""",
    "two_functions_same_nummeta_and_rootless": """
define void @g1() gc "shadow-stack" {
entry:
  %x = alloca i8*
  call void @llvm.gcroot(i8** %x, i8* null)
  ret void
}
define void @g2() gc "shadow-stack" {
entry:
  %y = alloca i8*
  %z = alloca i8*
  call void @llvm.gcroot(i8** %y, i8* null)
  call void @llvm.gcroot(i8** %z, i8* null)
  ret void
}
define void @g3() gc "shadow-stack" {
entry:
  %u = alloca i8*
  call void @llvm.gcroot(i8** %u, i8* bitcast (i32* @m2 to i8*))
  ret void
}
define void @norootsfn() gc "shadow-stack" {
entry:
  call void @use(i8* null)
  ret void
}
define void @notgc() {
entry:
  ret void
}
""",
    "existing_invoke_and_resume": """
declare i32 @__gxx_personality_v0(...)
define void @eh() gc "shadow-stack" personality i32 (...)* @__gxx_personality_v0 {
entry:
  %r = alloca i8*
  call void @llvm.gcroot(i8** %r, i8* null)
  %p = invoke i8* @alloc_throw() to label %ok unwind label %lp
ok:
  store i8* %p, i8** %r
  call void @may_throw(i8* %p)
  ret void
lp:
  %e = landingpad { i8*, i32 } cleanup
  resume { i8*, i32 } %e
}
""",
    "throwing_call_in_loop_with_phi": """
define i64 @tl(i64 %n) gc "shadow-stack" {
entry:
  %a = alloca i8*
  %b = alloca i8*
  call void @llvm.gcroot(i8** %a, i8* bitcast (i32* @m1 to i8*))
  call void @llvm.gcroot(i8** %b, i8* bitcast (i32* @m2 to i8*))
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i1, %loop ]
  %p = call i8* @alloc_throw()
  store i8* %p, i8** %a
  call void @may_throw(i8* %p)
  %i1 = add i64 %i, 1
  %c = icmp slt i64 %i1, %n
  br i1 %c, label %loop, label %out
out:
  %j = phi i64 [ %i1, %loop ]
  ret i64 %j
}
""",
    "nounwind_function_no_invokes": """
define void @nw(i1 %c) nounwind gc "shadow-stack" {
entry:
  %a = alloca i8*
  %b = alloca i8*
  call void @llvm.gcroot(i8** %a, i8* null)
  call void @llvm.gcroot(i8** %b, i8* null)
  %p = call i8* @alloc_throw()
  store i8* %p, i8** %b
  br i1 %c, label %x, label %y
x:
  call void @may_throw(i8* %p)
  ret void
y:
  ret void
}
""",
    # LLVM accepts gcroot calls outside the entry block: the frame slot is set up in the entry
    # block all the same; the root's null store stays right after its alloca.
    "root_named_later": """
define void @later(i1 %c) gc "shadow-stack" {
entry:
  %a = alloca i8*
  %b = alloca i8*
  call void @llvm.gcroot(i8** %b, i8* bitcast (i32* @m1 to i8*))
  br i1 %c, label %then, label %done
then:
  call void @llvm.gcroot(i8** %a, i8* null)
  %p = call i8* @alloc()
  store i8* %p, i8** %a
  call void @use(i8* %p)
  br label %done
done:
  ret void
}
""",
    "alloca_in_a_later_block": """
define i8* @inner(i1 %c) gc "shadow-stack" {
entry:
  br i1 %c, label %then, label %done
then:
  %a = alloca i8*
  call void @llvm.gcroot(i8** %a, i8* null)
  %p = call i8* @alloc()
  store i8* %p, i8** %a
  call void @may_throw(i8* %p)
  br label %done
done:
  %r = phi i8* [ null, %entry ], [ %p, %then ]
  ret i8* %r
}
""",
}

DROP = re.compile(r"^(; ModuleID|source_filename|target datalayout).*\n", re.M)


def _normalise(opt, text: str) -> str:
    res = run_opt(opt, ["-S"], text)
    assert res.returncode == 0, res.stderr
    return DROP.sub("", res.stdout)


def _llvm_lowered(tools, src: str) -> str:
    res = run_tool(tools.llc, ["-O0", "-stop-after=shadow-stack-gc-lowering", "-", "-o", "-"], src)
    assert res.returncode == 0, res.stderr
    m = re.search(r"^--- \|\n(.*?)^\.\.\.", res.stdout, re.M | re.S)
    assert m, res.stdout[:500]
    ir = "\n".join(line[2:] if line.startswith("  ") else line for line in m.group(1).splitlines())
    return _normalise(tools.opt, ir)


def _ours(src: str) -> str:
    module = parse_module(src)
    run(module, "shadow-stack-gc-lowering")
    return print_module(module)


def structure(text: str) -> dict:
    """What 'same structure' compares (see the module docstring), from ``opt -S`` text."""
    out: dict = {"framemaps": {}, "entries": {}, "roots": {}, "exits": {}, "blocks": {}}
    for m in re.finditer(r"^@(__gc_\S+) = internal constant (%\S+) \{ %gc_map \{ i32 (\d+), i32 (\d+) \}, "
                         r"\[\d+ x i8\*\] (.*) \}$", text, re.M):
        meta = m.group(5)
        metas = [] if meta == "zeroinitializer" else meta[1:-1].removeprefix("i8* ").split(", i8* ")
        out["framemaps"][m.group(1)] = (m.group(2), int(m.group(3)), int(m.group(4)), metas)
    out["stackentries"] = re.findall(r"^(%gc_stackentry\.\S+) = type \{ %gc_stackentry(.*) \}$", text, re.M)
    for fm in re.finditer(r"^define [^@]*@(\S+?)\(.*?^}", text, re.M | re.S):
        name, body = fm.group(1), fm.group(0)
        out["blocks"][name] = re.findall(r"^(\S+):", body, re.M)
        lines = [ln.strip() for ln in body.splitlines()]
        if not any(ln.startswith("%gc_frame = alloca") for ln in lines):
            continue
        start = next(i for i, ln in enumerate(lines) if ln.startswith("%gc_frame = alloca"))
        end = next(i for i, ln in enumerate(lines) if ln.startswith("store %gc_stackentry* %gc_newhead"))
        out["entries"][name] = lines[start:end + 1]
        out["roots"][name] = re.findall(r"^\s*%(?!gc_newhead )(\S+) = getelementptr %gc_stackentry\.\S+, "
                                        r"%\S+ %gc_frame, i32 0, i32 (\d+)$", body, re.M)
        exits = []
        for i, ln in enumerate(lines):
            if ln.startswith(("ret ", "resume ")) or ln == "ret void":
                exits.append(lines[i - 3:i + 1])
        out["exits"][name] = exits
    return out


@pytest.fixture(scope="module")
def results(llvm14):
    out = {}
    for key, body in PROGRAMS.items():
        src = DECLS + body
        ours_raw = _ours(src)
        out[key] = (ours_raw, _normalise(llvm14.opt, ours_raw), _llvm_lowered(llvm14, src))
    return out


def test_registered():
    assert "shadow-stack-gc-lowering" in REGISTRY


@pytest.mark.parametrize("key", sorted(PROGRAMS))
def test_opt_verifies(llvm14, results, key):
    res = run_opt(llvm14.opt, ["-passes=verify", "-disable-output"], results[key][0])
    assert res.returncode == 0, res.stderr


@pytest.mark.parametrize("key", sorted(PROGRAMS))
def test_same_structure(results, key):
    _, ours, theirs = results[key]
    s_ours, s_llvm = structure(ours), structure(theirs)
    assert s_llvm["framemaps"] and s_llvm["entries"], "the oracle lowered nothing"
    for field in ("framemaps", "stackentries", "roots", "entries", "exits", "blocks"):
        assert s_ours[field] == s_llvm[field], field


@pytest.mark.parametrize("key", sorted(PROGRAMS))
def test_same_text(results, key):
    _, ours, theirs = results[key]
    assert ours == theirs


def test_structure_extractor_sees_the_pieces(results):
    s = structure(results["four_roots_mixed_meta"][2])
    type_name, num_roots, num_meta, metas = s["framemaps"]["__gc_four"]
    assert (num_roots, num_meta) == (4, 2)
    assert metas == ["bitcast (i32* @m2 to i8*)", "bitcast ([2 x i64]* @m3 to i8*)"]
    assert s["roots"]["four"] == [("x", "1"), ("z", "2"), ("w", "3"), ("y", "4")]
    assert len(s["exits"]["four"]) == 2 and all("@llvm_gc_root_chain" in e[2] for e in s["exits"]["four"])
    assert type_name == "%gc_map.2"


def test_frame_map_names_clash_like_llvm(results):
    s = structure(results["two_functions_same_nummeta_and_rootless"][1])
    assert s["framemaps"]["__gc_g1"][0] == "%gc_map.0"
    assert s["framemaps"]["__gc_g2"][0] == "%gc_map.0.0"
    assert s["framemaps"]["__gc_g3"][0] == "%gc_map.1"
    assert "norootsfn" not in s["entries"]


def test_module_without_shadow_stack_untouched():
    src = DECLS + "define void @f() {\nentry:\n  ret void\n}\n"
    assert _ours(src) == print_module(parse_module(src))


@pytest.mark.parametrize("key", sorted(PROGRAMS))
def test_same_text_as_llvm19_in_opaque_ir(llvm19, key):
    """The same programs in opaque-pointer IR, against LLVM 19's ``llc -O0 -stop-after``."""
    src = print_module(parse_module(DECLS + PROGRAMS[key]), opaque=True)
    module = parse_module(src)
    run(module, "shadow-stack-gc-lowering")
    ours = _normalise(llvm19.opt, print_module(module, opaque=True))
    assert ours == _llvm_lowered(llvm19, src)


@pytest.mark.parametrize("key", ["root_named_later", "alloca_in_a_later_block", "one_root"])
def test_after_lower_gc_barriers_nothing_more(key):
    """llc's gc-lowering step is part of this pass; running it before (as ``gctoy llc`` does) adds nothing."""
    src = DECLS + PROGRAMS[key]
    module = parse_module(src)
    run(module, "lower-gc-barriers,shadow-stack-gc-lowering")
    assert print_module(module) == _ours(src)


@pytest.mark.parametrize("bad", [
    # not an alloca
    """define void @f(i8** %r) gc "shadow-stack" {
entry:
  call void @llvm.gcroot(i8** %r, i8* null)
  ret void
}""",
])
def test_rejects_invalid_gcroot(bad):
    with pytest.raises(ShadowStackError):
        _ours(DECLS + bad)
