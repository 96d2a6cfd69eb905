"""Each rule of gctoy's structural verifier, with an input that breaks it and one that keeps it."""
import pytest

from gctoy.errors import VerifyError
from gctoy.ir import parse_module
from gctoy.ir.verifier import check_module, verify_module

DECLS = """
declare void @foo()
declare i8 addrspace(1)* @make(i64)
declare token @llvm.experimental.gc.statepoint.p0f_isVoidf(i64 immarg, i32 immarg, void ()*, i32 immarg, i32 immarg, ...)
declare token @llvm.experimental.gc.statepoint.p0f_p1i8i64f(i64 immarg, i32 immarg, i8 addrspace(1)* (i64)*, i32 immarg, i32 immarg, ...)
declare i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token, i32 immarg, i32 immarg)
declare i8 addrspace(1)* @llvm.experimental.gc.result.p1i8(token)
declare i64 @llvm.experimental.gc.result.i64(token)
"""


def problems(body: str) -> list[str]:
    m = parse_module(DECLS + body, "t.ll")
    return [p.message for p in verify_module(m)]


GOOD = """
define i8 addrspace(1)* @ok(i8 addrspace(1)* %obj, i1 %c) gc "statepoint-example" {
entry:
  br i1 %c, label %a, label %b
a:
  %tok = call token (i64, i32, void ()*, i32, i32, ...) @llvm.experimental.gc.statepoint.p0f_isVoidf(i64 1, i32 0, void ()* @foo, i32 0, i32 0, i32 0, i32 0) [ "gc-live"(i8 addrspace(1)* %obj) ]
  %r = call i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token %tok, i32 0, i32 0)
  br label %b
b:
  %p = phi i8 addrspace(1)* [ %r, %a ], [ %obj, %entry ]
  ret i8 addrspace(1)* %p
}
"""


def test_good_function_has_no_problems():
    assert problems(GOOD) == []


@pytest.mark.parametrize(
    "body, fragment",
    [
        # a use in a block the definition does not dominate
        ("""define i32 @f(i1 %c) {
entry:
  br i1 %c, label %a, label %b
a:
  %x = add i32 1, 2
  br label %b
b:
  ret i32 %x
}""", "does not dominate all uses"),
        # phi entries must match the predecessors
        ("""define i32 @f(i1 %c) {
entry:
  br i1 %c, label %a, label %b
a:
  br label %b
b:
  %p = phi i32 [ 1, %a ]
  ret i32 %p
}""", "do not match the block's predecessors"),
        # a phi after a non-phi
        ("""define i32 @f() {
entry:
  br label %b
b:
  %x = add i32 1, 2
  %p = phi i32 [ 1, %entry ]
  ret i32 %p
}""", "grouped at the top"),
        # the entry block may not be a branch target
        ("""define void @f() {
entry:
  br label %entry
}""", "entry block must not have predecessors"),
        # return type mismatch
        ("""define i32 @f() {
entry:
  ret void
}""", "'ret' has 'void'"),
        # relocate index outside the gc-live bundle
        ("""define void @f(i8 addrspace(1)* %o) gc "statepoint-example" {
entry:
  %t = call token (i64, i32, void ()*, i32, i32, ...) @llvm.experimental.gc.statepoint.p0f_isVoidf(i64 1, i32 0, void ()* @foo, i32 0, i32 0, i32 0, i32 0) [ "gc-live"(i8 addrspace(1)* %o) ]
  %r = call i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token %t, i32 0, i32 1)
  ret void
}""", "index 1 is outside the gc-live bundle"),
        # the statepoint's token used by something other than relocate/result
        ("""declare void @use_token(token)
define void @f() gc "statepoint-example" {
entry:
  %t = call token (i64, i32, void ()*, i32, i32, ...) @llvm.experimental.gc.statepoint.p0f_isVoidf(i64 1, i32 0, void ()* @foo, i32 0, i32 0, i32 0, i32 0)
  call void @use_token(token %t)
  ret void
}""", "token may only be used"),
        # call-argument count disagrees with the target
        ("""define void @f() gc "statepoint-example" {
entry:
  %t = call token (i64, i32, i8 addrspace(1)* (i64)*, i32, i32, ...) @llvm.experimental.gc.statepoint.p0f_p1i8i64f(i64 1, i32 0, i8 addrspace(1)* (i64)* @make, i32 0, i32 0, i32 0, i32 0)
  ret void
}""", "0 call arguments but the target"),
        # gc.result of the wrong type
        ("""define void @f() gc "statepoint-example" {
entry:
  %t = call token (i64, i32, i8 addrspace(1)* (i64)*, i32, i32, ...) @llvm.experimental.gc.statepoint.p0f_p1i8i64f(i64 1, i32 0, i8 addrspace(1)* (i64)* @make, i32 1, i32 0, i64 8, i32 0, i32 0)
  %r = call i64 @llvm.experimental.gc.result.i64(token %t)
  ret void
}""", "does not match the target's return type"),
        # unknown flag bits
        ("""define void @f() gc "statepoint-example" {
entry:
  %t = call token (i64, i32, void ()*, i32, i32, ...) @llvm.experimental.gc.statepoint.p0f_isVoidf(i64 1, i32 0, void ()* @foo, i32 0, i32 4, i32 0, i32 0)
  ret void
}""", "outside the known mask"),
        # inline gc arguments mixed with bundles
        ("""define void @f(i8 addrspace(1)* %o) gc "statepoint-example" {
entry:
  %t = call token (i64, i32, void ()*, i32, i32, ...) @llvm.experimental.gc.statepoint.p0f_isVoidf(i64 1, i32 0, void ()* @foo, i32 0, i32 0, i32 0, i32 0, i8 addrspace(1)* %o) [ "gc-live"(i8 addrspace(1)* %o) ]
  ret void
}""", "mixes inline"),
    ],
)
def test_each_rule_is_reported(body, fragment):
    found = problems(body)
    assert any(fragment in p for p in found), found


def test_check_module_raises_with_location():
    m = parse_module(DECLS + """define i32 @f(i1 %c) {
entry:
  br i1 %c, label %a, label %b
a:
  %x = add i32 1, 2
  br label %b
b:
  ret i32 %x
}""", "t.ll")
    with pytest.raises(VerifyError) as e:
        check_module(m)
    # `ret i32 %x` is on line 16 of the text (DECLS has 8 lines)
    assert str(e.value).startswith("t.ll:16:3: error:")
