"""The gcroot/gcread/gcwrite rules: each case is checked against gctoy and, for the LLVM rules, the verifiers of
LLVM 14 and 19; gctoy's own verifier refuses exactly what LLVM's refuses."""
from __future__ import annotations

import pytest

from gctoy.errors import VerifyError
from gctoy.ir import parse_module, print_module
from gctoy.ir import instructions as I
from gctoy.ir.gcroot_rules import Origin, Rule, check_gc_intrinsics, gc_intrinsic_problems
from gctoy.ir.types import I8, PointerType
from gctoy.ir.values import ConstantNull
from gctoy.passes import run
from gctoy.llvm_tools import run_tool

TYPED = """
@meta = constant i32 7
declare void @llvm.gcroot(i8**, i8*)
declare i8* @llvm.gcread(i8*, i8**)
declare void @llvm.gcwrite(i8*, i8*, i8**)
"""

OPAQUE = """
@meta = constant i32 7
declare void @llvm.gcroot(ptr, ptr)
declare ptr @llvm.gcread(ptr, ptr)
declare void @llvm.gcwrite(ptr, ptr, ptr)
"""


def fn(body: str, gc: str | None = '"shadow-stack"', params: str = "i8* %o, i8** %d, i8* %m") -> str:
    attr = f" gc {gc}" if gc else ""
    return f"define void @f({params}){attr} {{\nentry:\n{body}\n  ret void\n}}\n"


# (name, module text, rules gctoy must report)
CASES = [
    ("good", TYPED + fn("""  %a = alloca i8*
  %x = alloca i32*
  %c = bitcast i32** %x to i8**
  call void @llvm.gcroot(i8** %a, i8* null)
  call void @llvm.gcroot(i8** %c, i8* bitcast (i32* @meta to i8*))
  call void @llvm.gcwrite(i8* %o, i8* %o, i8** %d)
  %r = call i8* @llvm.gcread(i8* %o, i8** %d)"""), set()),
    ("no-gc", TYPED + fn("""  %a = alloca i8*
  call void @llvm.gcroot(i8** %a, i8* null)
  %r = call i8* @llvm.gcread(i8* %o, i8** %d)""", gc=None), {Rule.HAS_GC}),
    ("root-not-alloca", TYPED + fn("  call void @llvm.gcroot(i8** %d, i8* null)"), {Rule.ROOT_IS_ALLOCA}),
    ("meta-not-constant", TYPED + fn("""  %a = alloca i8*
  call void @llvm.gcroot(i8** %a, i8* %m)"""), {Rule.META_IS_CONSTANT}),
    ("non-pointer-null-meta", TYPED + fn("""  %a = alloca i64
  %c = bitcast i64* %a to i8**
  call void @llvm.gcroot(i8** %c, i8* null)"""), {Rule.NON_POINTER_NEEDS_META}),
    ("non-pointer-with-meta", TYPED + fn("""  %a = alloca i64
  %c = bitcast i64* %a to i8**
  call void @llvm.gcroot(i8** %c, i8* bitcast (i32* @meta to i8*))"""), set()),
    ("root-outside-entry", TYPED + fn("""  %a = alloca i8*
  br label %later
later:
  call void @llvm.gcroot(i8** %a, i8* null)"""), {Rule.ROOT_IN_ENTRY}),
    ("meta-inttoptr", TYPED + fn("""  %a = alloca i8*
  call void @llvm.gcroot(i8** %a, i8* inttoptr (i64 7 to i8*))"""), {Rule.META_IS_GLOBAL}),
    ("bad-gcroot-type", """declare void @llvm.gcroot(i32**, i8*)
""" + fn("""  %a = alloca i32*
  call void @llvm.gcroot(i32** %a, i8* null)"""), {Rule.SIGNATURE}),
    ("bad-gcread-type", """declare i32* @llvm.gcread(i8*, i8**)
""" + fn("  %r = call i32* @llvm.gcread(i8* %o, i8** %d)"), {Rule.SIGNATURE}),
    ("gcwrite-addrspace1", """declare void @llvm.gcwrite(i8 addrspace(1)*, i8*, i8**)
""" + fn("  call void @llvm.gcwrite(i8 addrspace(1)* null, i8* %o, i8** %d)"), {Rule.SIGNATURE}),
]


def rules_of(text: str) -> set[Rule]:
    m = parse_module(text, "t.ll")
    return {p.rule for f in m.functions for p in gc_intrinsic_problems(f)}


@pytest.mark.parametrize("name,text,want", CASES, ids=[c[0] for c in CASES])
def test_rules_gctoy_reports(name, text, want):
    assert rules_of(text) == want


@pytest.mark.parametrize("name,text,want", CASES, ids=[c[0] for c in CASES])
def test_llvm14_rejects_exactly_the_llvm_rules(llvm14, name, text, want):
    res = run_tool(llvm14.opt, ["-passes=verify", "-disable-output"], text)
    llvm_rejects = res.returncode != 0
    assert llvm_rejects == any(r.origin is Origin.LLVM for r in want), res.stderr


@pytest.mark.parametrize("name,text,want", CASES, ids=[c[0] for c in CASES])
def test_verify_pass_refuses_exactly_the_llvm_rules(name, text, want):
    """The seed's rules are reported by gc_intrinsic_problems but are no reason to refuse a module."""
    refuses = any(r.origin is Origin.LLVM for r in want)
    if refuses:
        with pytest.raises(VerifyError):
            run(parse_module(text, "t.ll"), "verify")
    else:
        run(parse_module(text, "t.ll"), "verify")


@pytest.mark.parametrize("name,text,want", CASES, ids=[c[0] for c in CASES])
def test_llvm19_rejects_exactly_the_llvm_rules(llvm19, name, text, want):
    """The same modules in opaque-pointer form (where a typed signature mismatch cannot be written)."""
    opaque = print_module(parse_module(text, "t.ll"), opaque=True)
    res = run_tool(llvm19.opt, ["-passes=verify", "-disable-output"], opaque)
    assert (res.returncode != 0) == any(r.origin is Origin.LLVM for r in rules_of(opaque)), res.stderr


def test_rule_origins():
    llvm = {r for r in Rule if r.origin is Origin.LLVM}
    assert llvm == {Rule.SIGNATURE, Rule.HAS_GC, Rule.ROOT_IS_ALLOCA, Rule.META_IS_CONSTANT,
                    Rule.NON_POINTER_NEEDS_META}
    assert set(Rule) - llvm == {Rule.ROOT_IN_ENTRY, Rule.META_IS_GLOBAL}


def test_opaque_signatures_accepted():
    text = OPAQUE + fn("""  %a = alloca ptr
  call void @llvm.gcroot(ptr %a, ptr @meta)
  call void @llvm.gcwrite(ptr %o, ptr %o, ptr %d)
  %r = call ptr @llvm.gcread(ptr %o, ptr %d)""", params="ptr %o, ptr %d, ptr %m")
    assert rules_of(text) == set()


def test_opaque_wrong_arity_is_a_signature_error():
    text = "declare ptr @llvm.gcread(ptr)\n" + fn("  %r = call ptr @llvm.gcread(ptr %o)",
                                                  params="ptr %o, ptr %d, ptr %m")
    m = parse_module(text, "t.ll")
    (p,) = gc_intrinsic_problems(m.get_function("f"))
    assert p.rule is Rule.SIGNATURE and "'ptr (ptr, ptr)'" in p.message


def test_check_raises_with_source_location():
    text = TYPED + fn("  call void @llvm.gcroot(i8** %d, i8* null)")
    with pytest.raises(VerifyError) as e:
        check_gc_intrinsics(parse_module(text, "t.ll"))
    line = text.splitlines().index("  call void @llvm.gcroot(i8** %d, i8* null)") + 1
    assert e.value.location == f"t.ll:{line}:3"
    assert "must be an alloca" in e.value.message


def test_check_raises_with_block_location_for_built_ir():
    m = parse_module(TYPED + fn("  %a = alloca i8*"), "t.ll")
    f = m.get_function("f")
    gcroot = m.get_function("llvm.gcroot")
    arg = f.args[1]
    call = I.Call(gcroot.ftype, gcroot, [arg, ConstantNull(PointerType(I8))])
    f.entry.insert_before(f.entry.terminator, call)
    with pytest.raises(VerifyError) as e:
        check_gc_intrinsics(m)
    assert e.value.location == "@f, block %entry, instruction 1"


def test_seed_rule_reported_but_not_refused():
    text = TYPED + fn("""  br label %later
later:
  %a = alloca i8*
  call void @llvm.gcroot(i8** %a, i8* null)""")
    m = parse_module(text, "t.ll")
    assert [p.rule for p in gc_intrinsic_problems(m.get_function("f"))] == [Rule.ROOT_IN_ENTRY]
    run(m, "verify")
    with pytest.raises(VerifyError, match="entry block"):
        check_gc_intrinsics(m)


def test_verify_pass_reports_every_problem_with_others():
    from gctoy.ir.verifier import verify_module

    text = TYPED + fn("""  %a = alloca i8*
  call void @llvm.gcroot(i8** %d, i8* %m)""", gc=None)
    msgs = [p.message for p in verify_module(parse_module(text, "t.ll"))]
    assert len(msgs) == 3
    assert any("does not use GC" in s for s in msgs)


def test_declarations_are_not_checked():
    m = parse_module("declare void @llvm.gcroot(i32**, i8*)\n", "t.ll")
    assert gc_intrinsic_problems(m.get_function("llvm.gcroot")) == []
    check_gc_intrinsics(m)


def test_gcread_unaffected_by_root_rules():
    m = parse_module(TYPED + fn("  %r = call i8* @llvm.gcread(i8* %o, i8** %d)"), "t.ll")
    assert gc_intrinsic_problems(m.get_function("f")) == []
