"""extractelement, insertelement, shufflevector and vector GEPs: parsed, typed, printed back, checked.

The round trips are exact (typed and opaque spellings); where LLVM is installed, its ``opt``
must read gctoy's text and print it back the same way. Bad input is one error at its line
and column. The verifier accepts a vector of GC pointers in ``gc-live`` and checks vector
``gc.relocate`` calls as LLVM does.
"""
from __future__ import annotations

import pytest

from gctoy.errors import IRParseError
from gctoy.ir import parse_module, print_module
from gctoy.ir import instructions as I
from gctoy.ir.verifier import verify_module
from gctoy.llvm_tools import run_opt

TYPED = """define <2 x i8 addrspace(1)*> @f(<2 x i8 addrspace(1)*> %v, i8 addrspace(1)* %p, i64 %i, <2 x i64> %iv) {
entry:
  %g = getelementptr i8, <2 x i8 addrspace(1)*> %v, i64 8
  %g2 = getelementptr inbounds i8, i8 addrspace(1)* %p, <2 x i64> %iv
  %g3 = getelementptr i8, <2 x i8 addrspace(1)*> %v, <2 x i64> <i64 1, i64 2>
  %e = extractelement <2 x i8 addrspace(1)*> %g, i64 %i
  %ins = insertelement <2 x i8 addrspace(1)*> undef, i8 addrspace(1)* %e, i32 0
  %s = shufflevector <2 x i8 addrspace(1)*> %ins, <2 x i8 addrspace(1)*> poison, <2 x i32> zeroinitializer
  %s2 = shufflevector <2 x i8 addrspace(1)*> %ins, <2 x i8 addrspace(1)*> %g3, <4 x i32> <i32 0, i32 3, i32 undef, i32 1>
  %z = insertelement <2 x i8 addrspace(1)*> zeroinitializer, i8 addrspace(1)* null, i32 1
  %n = extractelement <2 x i64> <i64 1, i64 2>, i32 1
  ret <2 x i8 addrspace(1)*> %s
}
"""


def _fn(text: str):
    return parse_module(text, "v.ll").get_function("f")


def test_typed_round_trip_is_exact():
    assert print_module(parse_module(TYPED, "v.ll")) == TYPED


def test_opaque_round_trip_is_exact():
    opaque = print_module(parse_module(TYPED, "v.ll"), opaque=True)
    assert "getelementptr i8, <2 x ptr addrspace(1)> %v, i64 8" in opaque
    assert "shufflevector <2 x ptr addrspace(1)> %ins, <2 x ptr addrspace(1)> %g3, <4 x i32>" in opaque
    assert print_module(parse_module(opaque, "v.ll"), opaque=True) == opaque


def test_result_types():
    by = {i.name: i for i in _fn(TYPED).instructions() if i.name}
    assert str(by["g"].type) == "<2 x i8 addrspace(1)*>"
    assert str(by["g2"].type) == "<2 x i8 addrspace(1)*>"  # a scalar base with vector indices
    assert str(by["e"].type) == "i8 addrspace(1)*"
    assert str(by["s2"].type) == "<4 x i8 addrspace(1)*>"  # as many lanes as the mask
    assert isinstance(by["s2"], I.ShuffleVector) and by["s2"].mask == [0, 3, None, 1]
    assert by["s"].is_zero_splat() and not by["s2"].is_zero_splat()
    assert by["ins"].operands == [by["ins"].vector, by["e"], by["ins"].index]


def test_replacing_an_operand():
    fn = _fn(TYPED)
    by = {i.name: i for i in fn.instructions() if i.name}
    assert fn.replace_all_uses(by["e"], fn.args[1]) == 1
    assert by["ins"].element is fn.args[1]


@pytest.mark.parametrize("line, col, message", [
    ("%x = extractelement i8 addrspace(1)* %p, i64 0", 23, "extractelement requires a vector operand"),
    ("%x = insertelement <2 x i8 addrspace(1)*> %v, i64 %i, i32 0", 49, "does not match the vector's element type"),
    ("%x = extractelement <2 x i8 addrspace(1)*> %v, <2 x i64> %iv", 50, "extractelement index must be an integer"),
    ("%x = shufflevector <2 x i8 addrspace(1)*> %v, <2 x i8 addrspace(1)*> %v, <2 x i32> <i32 0, i32 4>", 76,
     "invalid shufflevector mask"),
    ("%x = shufflevector <2 x i8 addrspace(1)*> %v, <2 x i8 addrspace(1)*> %v, <2 x i32> %m", 76,
     "shufflevector mask must be a constant"),
    ("%x = shufflevector <2 x i8 addrspace(1)*> %v, <4 x i8 addrspace(1)*> %w, <2 x i32> zeroinitializer", 49,
     "shufflevector operands must have the same type"),
    ("%x = getelementptr i8, i64 %i, i64 0", 26, "expected a pointer or a vector of pointers"),
    ("%x = getelementptr i8, <2 x i8 addrspace(1)*> %v, <4 x i64> %w4", 26,
     "vector operands must have the same number of elements"),
])
def test_bad_vector_instructions_are_one_located_error(line, col, message):
    text = ("define void @f(<2 x i8 addrspace(1)*> %v, <4 x i8 addrspace(1)*> %w, i8 addrspace(1)* %p, i64 %i, "
            "<2 x i64> %iv, <2 x i32> %m, <4 x i64> %w4) {\n  " + line + "\n  ret void\n}\n")
    with pytest.raises(IRParseError) as e:
        parse_module(text, "bad.ll")
    assert (e.value.line, e.value.column) == (2, col)
    assert message in e.value.message and "object at" not in str(e.value)


@pytest.mark.parametrize("version", [14, 19])
def test_llvm_reads_and_prints_the_same_text(version, request):
    tools = request.getfixturevalue(f"llvm{version}")
    text = print_module(parse_module(TYPED, "v.ll"), opaque=version >= 15)
    r = run_opt(tools.opt, ["-S", "-passes=verify"], text)
    assert r.returncode == 0, r.stderr
    theirs = "\n".join(line for line in r.stdout.splitlines() if not line.startswith(("; ModuleID", "source_f")))
    assert theirs.strip() == text.strip()


# ---------------------------------------------------------------------------
# the verifier: vectors of GC pointers in gc-live, vector relocates

STATEPOINT = """declare void @foo()
declare token @llvm.experimental.gc.statepoint.p0f_isVoidf(i64 immarg, i32 immarg, void ()*, i32 immarg, i32 immarg, ...)
declare <2 x i8 addrspace(1)*> @llvm.experimental.gc.relocate.v2p1i8(token, i32 immarg, i32 immarg)
declare i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token, i32 immarg, i32 immarg)

define <2 x i8 addrspace(1)*> @f(<2 x i8 addrspace(1)*> %v) gc "statepoint-example" {
entry:
  %t = call token (i64, i32, void ()*, i32, i32, ...) @llvm.experimental.gc.statepoint.p0f_isVoidf(i64 0, i32 0, void ()* @foo, i32 0, i32 0, i32 0, i32 0) [ "gc-live"(<2 x i8 addrspace(1)*> %v) ]
  %r = call coldcc RTYPE @llvm.experimental.gc.relocate.RNAME(token %t, i32 0, i32 0)
  ret <2 x i8 addrspace(1)*> %v
}
"""


def test_verifier_accepts_a_vector_in_gc_live():
    text = STATEPOINT.replace("RTYPE", "<2 x i8 addrspace(1)*>").replace("RNAME", "v2p1i8")
    assert verify_module(parse_module(text, "sp.ll")) == []


def test_verifier_wants_a_vector_relocated_as_a_vector():
    text = STATEPOINT.replace("RTYPE", "i8 addrspace(1)*").replace("RNAME", "p1i8")
    problems = verify_module(parse_module(text, "sp.ll"))
    assert [p.message for p in problems] == ["gc.relocate: vector relocates to vector and pointer to pointer"]
    assert problems[0].location == "sp.ll:9:8"


@pytest.mark.parametrize("rtype, rname", [("<2 x i8 addrspace(1)*>", "v2p1i8"), ("i8 addrspace(1)*", "p1i8")])
def test_same_verdict_as_llvm14(llvm14, rtype, rname):
    text = STATEPOINT.replace("RTYPE", rtype).replace("RNAME", rname)
    ours = [p.message for p in verify_module(parse_module(text, "sp.ll"))]
    r = run_opt(llvm14.opt, ["-passes=verify", "-disable-output"], text)
    assert (r.returncode == 0) == (ours == [])
    assert all(m in r.stderr for m in ours)
