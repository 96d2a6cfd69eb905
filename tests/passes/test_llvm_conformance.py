"""Small programs on which gctoy's passes must do exactly what LLVM 14 and LLVM 19 do.

Each test runs the real ``opt`` (or ``llc``) of the release as the oracle; the LLVM 19 runs
read the same programs printed with opaque pointers. Both outputs are printed again by LLVM
before they are compared, so only what the pass did counts, not how gctoy spaces its text.
"""
from __future__ import annotations

import pytest

from gctoy.ir import parse_module, print_module
from gctoy.passes import run
from gctoy.llvm_tools import run_opt


def in_style(llvm, typed_text: str) -> str:
    """``typed_text`` as ``llvm``'s opt reads it (``ptr`` from LLVM 15 on)."""
    if llvm.version < 15:
        return typed_text
    return print_module(parse_module(typed_text, "test.ll"), opaque=True)


def canonical(llvm, text: str) -> str:
    """``text`` as ``llvm``'s opt prints it, without the module header; fails if opt rejects it."""
    r = run_opt(llvm.opt, ["-S", "-passes=verify"], text)
    assert r.returncode == 0, f"LLVM {llvm.version} rejects:\n{r.stderr}\n{text}"
    return "\n".join(line for line in r.stdout.splitlines() if not line.startswith(("; ModuleID", "source_filename")))


def both(llvm, typed_text: str, passes: str, opt_args: list[str]) -> tuple[str, str]:
    """(LLVM's output, gctoy's output) of the same passes on the same module, printed by LLVM."""
    src = canonical(llvm, in_style(llvm, typed_text))
    theirs = run_opt(llvm.opt, ["-S", *opt_args], src)
    assert theirs.returncode == 0, theirs.stderr
    m = parse_module(src, "test.ll")
    run(m, passes)
    return canonical(llvm, theirs.stdout), canonical(llvm, print_module(m, opaque=llvm.version >= 15))


# ---------------------------------------------------------------------------
# llvm.experimental.deoptimize

DEOPTIMIZE = """
declare i32 @llvm.experimental.deoptimize.i32(...)
declare void @llvm.experimental.deoptimize.isVoid(...)
declare void @foo()

define i32 @f(i8 addrspace(1)* %p, i32 %x) gc "statepoint-example" {
entry:
  call void @foo()
  %c = icmp eq i32 %x, 0
  br i1 %c, label %deopt, label %done
deopt:
  %r = call i32 (...) @llvm.experimental.deoptimize.i32(i32 %x, i8 addrspace(1)* %p) [ "deopt"(i32 %x, i8 addrspace(1)* %p) ]
  ret i32 %r
done:
  ret i32 1
}

define void @g(i8 addrspace(1)* %p) gc "statepoint-example" {
entry:
  call void (...) @llvm.experimental.deoptimize.isVoid(i8 addrspace(1)* %p) [ "deopt"(i8 addrspace(1)* %p) ]
  ret void
}
"""


def test_deoptimize_becomes_a_statepoint_of_llvm_deoptimize(llvm):
    theirs, ours = both(llvm, DEOPTIMIZE, "rewrite-statepoints-for-gc", ["-passes=rewrite-statepoints-for-gc"])
    assert "@__llvm_deoptimize" in theirs and "unreachable" in theirs
    assert ours == theirs


# ---------------------------------------------------------------------------
# C library functions (LLVM's TargetLibraryInfo) are GC leaves

LIBCALLS = """
declare double @ldexp(double, i32)
declare i8* @memcpy(i8*, i8*, i64)
declare i64 @strlen(i8 addrspace(1)*)
declare void @sqrt()
declare double @cos(double)
declare i8* @fopen64(i8*, i8*)
declare i32 @fopen(i8*, i8*)
declare double @erf(double)
declare void @use(i8 addrspace(1)*)

define double @f(i8 addrspace(1)* %p, i8* %q) gc "statepoint-example" {
entry:
  %a = call double @ldexp(double 1.0, i32 2)
  %b = call i8* @memcpy(i8* %q, i8* %q, i64 8)
  %c = call i64 @strlen(i8 addrspace(1)* %p)
  call void @sqrt()
  %d = call double @cos(double %a) nobuiltin
  %e = call i8* @fopen64(i8* %q, i8* %q)
  %f = call i32 @fopen(i8* %q, i8* %q)
  %g = call double @erf(double %d)
  call void @use(i8 addrspace(1)* %p)
  ret double %g
}
"""
LINUX = 'target triple = "x86_64-unknown-linux-gnu"\n'


def rs4gc(llvm) -> str:
    """gctoy's RS4GC as the release behaves (LLVM 19 knows a few more library functions)."""
    return "rewrite-statepoints-for-gc" if llvm.version == 14 else f"rewrite-statepoints-for-gc<llvm={llvm.version}>"


@pytest.mark.parametrize("triple", [LINUX, ""], ids=["linux", "no-triple"])
def test_library_calls_are_not_wrapped(llvm, triple):
    theirs, ours = both(llvm, triple + LIBCALLS, rs4gc(llvm), ["-passes=rewrite-statepoints-for-gc"])
    wrapped = {line.split("@")[2].split(",")[0] for line in theirs.splitlines() if "= call token" in line}
    assert wrapped == {"sqrt", "cos", "fopen", "use", "erf" if llvm.version == 14 else "use"} | (
        set() if triple else {"fopen64"})
    assert ours == theirs


LOOP = """
declare double @ldexp(double, i32)
define double @loop(i8 addrspace(1)* %p, i64 %n) gc "statepoint-example" {
entry:
  br label %header
header:
  %i = phi i64 [ 0, %entry ], [ %i.next, %header ]
  %x = phi double [ 1.0, %entry ], [ %y, %header ]
  %y = call double @ldexp(double %x, i32 1)
  %i.next = add i64 %i, 1
  %c = icmp ult i64 %i.next, %n
  br i1 %c, label %header, label %exit
exit:
  ret double %y
}

@flag = global i1 false
declare void @do_safepoint()
define void @gc.safepoint_poll() {
entry:
  %c = load volatile i1, i1* @flag
  br i1 %c, label %slow, label %done
slow:
  call void @do_safepoint()
  br label %done
done:
  ret void
}
"""
PLACE_SAFEPOINTS = {14: ["-enable-new-pm=0", "-place-safepoints"], 19: ["-passes=place-safepoints"]}


def test_a_loop_calling_only_a_library_function_gets_a_backedge_poll(llvm):
    theirs, ours = both(llvm, LOOP, "place-safepoints", PLACE_SAFEPOINTS[llvm.version])
    assert theirs.count("call void @do_safepoint()") == 3  # the poll's own, entry and backedge
    assert ours == theirs


def test_erf_is_a_library_function_for_llvm19_only(llvm):
    loop = LOOP.replace("declare double @ldexp(double, i32)", "declare double @erf(double)").replace(
        "call double @ldexp(double %x, i32 1)", "call double @erf(double %x)")
    passes = "place-safepoints" if llvm.version == 14 else f"place-safepoints<llvm={llvm.version}>"
    theirs, ours = both(llvm, loop, passes, PLACE_SAFEPOINTS[llvm.version])
    assert theirs.count("call void @do_safepoint()") == (2 if llvm.version == 14 else 3)
    assert ours == theirs


def test_every_library_function_is_a_leaf_with_its_prototype(llvm):
    from gctoy.passes.library_functions import ADDED_AFTER_LLVM_14, LIBRARY_FUNCTIONS, PROTOTYPES

    names = [n for n in LIBRARY_FUNCTIONS if llvm.version > 14 or n not in ADDED_AFTER_LLVM_14]
    # gctoy's IR subset has no x86_fp80: those names (the 'long double' functions) are checked on LLVM alone
    long_double = [n for n in names if "x86_fp80" in PROTOTYPES[n]]
    for group in (long_double, [n for n in names if n not in long_double]):
        opaque = llvm.version >= 15
        text = LINUX + f"declare void @use({_gc(opaque)})\n" + "\n".join(
            _probe(i, n, PROTOTYPES[n], opaque) for i, n in enumerate(group))
        src = canonical(llvm, text)
        r = run_opt(llvm.opt, ["-S", "-passes=rewrite-statepoints-for-gc"], src)
        assert r.returncode == 0, r.stderr
        wrapped = [line for line in r.stdout.splitlines() if "= call token" in line and "@use" not in line]
        assert wrapped == [], f"LLVM {llvm.version} does not take these for library functions: {wrapped[:5]}"
    theirs, ours = both(llvm, text, rs4gc(llvm), ["-passes=rewrite-statepoints-for-gc"])
    assert ours == theirs


_ZERO = {"i8": "0", "i16": "0", "i32": "0", "i64": "0", "double": "0.0", "float": "0.0",
         "x86_fp80": "0xK00000000000000000000"}


def _gc(opaque: bool) -> str:
    return "ptr addrspace(1)" if opaque else "i8 addrspace(1)*"


def _probe(i: int, name: str, proto: str, opaque: bool) -> str:
    """A function that calls ``name`` (declared with ``proto``) with a GC pointer live across the call."""
    ret, _, params = proto.partition(" (")
    ps = [p for p in params.rstrip(")").split(", ") if p]
    typed = {} if opaque else {"ptr": "i8*"}
    decl_params = ", ".join(typed.get(p, p) for p in ps)
    args = ", ".join(f"{typed.get(p, p)} {'null' if p == 'ptr' else _ZERO[p]}" for p in ps if p != "...")
    r = typed.get(ret, ret)
    callee = f'@"{name}"'
    call_ty = f"{r} ({decl_params})" if "..." in ps else r
    lhs = "" if ret == "void" else "%r = "
    return (f"declare {r} {callee}({decl_params})\n"
            f'define void @probe{i}({_gc(opaque)} %p) gc "statepoint-example" {{\nentry:\n'
            f"  {lhs}call {call_ty} {callee}({args})\n  call void @use({_gc(opaque)} %p)\n  ret void\n}}")


# ---------------------------------------------------------------------------
# a loop phi whose only other input is a base: its own base in LLVM 19, not in LLVM 14

SELF_PHI = """
declare void @bar(i8 addrspace(1)*)
define void @f(i8 addrspace(1)* %a0) gc "statepoint-example" {
entry:
  br label %loop
loop:
  %v = phi i8 addrspace(1)* [ %a0, %entry ], [ %v, %loop ]
  call void @bar(i8 addrspace(1)* %a0)
  call void @bar(i8 addrspace(1)* %v)
  br label %loop
}
"""


def test_base_of_a_loop_phi_that_is_its_own_input(llvm):
    theirs, ours = both(llvm, SELF_PHI, rs4gc(llvm), ["-passes=rewrite-statepoints-for-gc"])
    own_base = "i32 0, i32 0) ; (%v, %v)" in theirs
    assert own_base == (llvm.version > 14)
    assert ours == theirs


# ---------------------------------------------------------------------------
# opaque pointers: a statepoint's target carries elementtype(<its function type>)

OPAQUE_CALLS = """
declare ptr addrspace(1) @make(i64)
declare void @take(ptr addrspace(1), i32)
define ptr addrspace(1) @f(ptr addrspace(1) %p) gc "statepoint-example" {
entry:
  %q = call ptr addrspace(1) @make(i64 8)
  call void @take(ptr addrspace(1) %p, i32 1)
  ret ptr addrspace(1) %q
}
"""


@pytest.mark.parametrize("passes", ["rewrite-statepoints-for-gc", "place-safepoints<wrap-calls;no-entry>"])
def test_opaque_statepoints_carry_the_callee_type(llvm19, passes):
    m = parse_module(OPAQUE_CALLS, "opaque.ll")
    run(m, passes)
    out = print_module(m, opaque=True)
    # (a bare statepoint of place-safepoints<wrap-calls> relocates nothing yet: only RS4GC's output is
    # safepoint-correct)
    for check in ("verify", "verify<safepoint-ir>") if passes.startswith("rewrite") else ("verify",):
        r = run_opt(llvm19.opt, [f"-passes={check}", "-disable-output"], out)
        assert r.returncode == 0, f"opt-19 -passes={check}:\n{r.stderr[:400]}\n{out}"
    assert "ptr elementtype(ptr addrspace(1) (i64)) @make" in out
    assert "ptr elementtype(void (ptr addrspace(1), i32)) @take" in out


def test_opaque_rs4gc_output_is_llvm19s(llvm19):
    theirs, ours = both(llvm19, OPAQUE_CALLS, "rewrite-statepoints-for-gc<llvm=19>", ["-passes=rewrite-statepoints-for-gc"])
    assert ours == theirs


@pytest.mark.parametrize("passes", ["rewrite-statepoints-for-gc<llvm=13>", "rewrite-statepoints-for-gc<llvm=x>",
                                    "place-safepoints<llvm=>", "place-safepoints<llvm=9>"])
def test_a_bad_llvm_release_is_a_clear_error(passes):
    from gctoy.errors import GCToyError

    with pytest.raises(GCToyError, match=r"unknown .*option 'llvm=.*llvm=N with N >= 14"):
        run(parse_module(OPAQUE_CALLS, "opaque.ll"), passes)
