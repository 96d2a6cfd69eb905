"""Broken modules, each with a repaired twin: the IR that ``gctoy llc``/``run``/``opt`` must refuse
before lowering (tests/ir checks the verifier and LLVM 14 on them, tests/hard_input the commands)."""
from __future__ import annotations

STATEPOINT_DECLS = """
declare token @llvm.experimental.gc.statepoint.p0f_i64f(i64 immarg, i32 immarg, i64 ()*, i32 immarg, i32 immarg, ...)
declare i64 @llvm.experimental.gc.result.i64(token)
declare i32 @llvm.experimental.gc.result.i32(token)
define i64 @callee() {
entry:
  ret i64 7
}
"""

#: name -> (broken module, repaired module, fragment of gctoy's message)
CASES: dict[str, tuple[str, str, str]] = {
    "self-reference": ("""
define i64 @main() {
entry:
  br label %b
b:
  %x = add i64 %x, 1
  ret i64 %x
}""", """
define i64 @main() {
entry:
  br label %b
b:
  %x = add i64 1, 1
  ret i64 %x
}""", "only phi nodes may reference their own value"),
    "use before definition": ("""
define i64 @main() {
entry:
  %y = add i64 %x, 1
  %x = add i64 1, 1
  ret i64 %y
}""", """
define i64 @main() {
entry:
  %x = add i64 1, 1
  %y = add i64 %x, 1
  ret i64 %y
}""", "does not dominate all uses"),
    "phi after a non-phi": ("""
define i64 @main() {
entry:
  br label %b
b:
  %y = add i64 1, 1
  %p = phi i64 [ 1, %entry ]
  ret i64 %p
}""", """
define i64 @main() {
entry:
  br label %b
b:
  %p = phi i64 [ 1, %entry ]
  %y = add i64 1, 1
  ret i64 %p
}""", "grouped at the top"),
    "phi in the entry block": ("""
define i64 @main() {
entry:
  %p = phi i64 [ 1, %entry ]
  ret i64 %p
}""", """
define i64 @main() {
entry:
  ret i64 1
}""", "do not match the block's predecessors"),
    "phi naming a non-predecessor": ("""
define i64 @main() {
entry:
  br label %b
c:
  ret i64 0
b:
  %p = phi i64 [ 1, %entry ], [ 2, %c ]
  ret i64 %p
}""", """
define i64 @main() {
entry:
  br label %b
c:
  ret i64 0
b:
  %p = phi i64 [ 1, %entry ]
  ret i64 %p
}""", "do not match the block's predecessors"),
    "token phi": ("""
define i64 @main() {
entry:
  br label %b
b:
  %p = phi token [ none, %entry ]
  ret i64 0
}""", """
define i64 @main() {
entry:
  br label %b
b:
  ret i64 0
}""", "phi nodes cannot have token type"),
    "token select": ("""
define i64 @main(i1 %c) {
entry:
  %s = select i1 %c, token none, token none
  ret i64 0
}""", """
define i64 @main(i1 %c) {
entry:
  %s = select i1 %c, i64 1, i64 2
  ret i64 0
}""", "select values cannot have token type"),
    "token alloca": ("""
define i64 @main() {
entry:
  %a = alloca token
  ret i64 0
}""", """
define i64 @main() {
entry:
  %a = alloca i64
  ret i64 0
}""", "invalid type for alloca"),
    "token parameter": ("""
declare void @f(token)
define i64 @main() {
entry:
  ret i64 0
}""", """
declare void @f(i64)
define i64 @main() {
entry:
  ret i64 0
}""", "takes a token but is not an intrinsic"),
    "token result": ("""
declare token @f()
define i64 @main() {
entry:
  ret i64 0
}""", """
declare i64 @f()
define i64 @main() {
entry:
  ret i64 0
}""", "returns a token but is not an intrinsic"),
    "gc.result of the wrong type": (STATEPOINT_DECLS + """
define i64 @main() gc "statepoint-example" {
entry:
  %t = call token (i64, i32, i64 ()*, i32, i32, ...) @llvm.experimental.gc.statepoint.p0f_i64f(i64 0, i32 0, i64 ()* @callee, i32 0, i32 0, i32 0, i32 0)
  %r = call i32 @llvm.experimental.gc.result.i32(token %t)
  ret i64 0
}""", STATEPOINT_DECLS + """
define i64 @main() gc "statepoint-example" {
entry:
  %t = call token (i64, i32, i64 ()*, i32, i32, ...) @llvm.experimental.gc.statepoint.p0f_i64f(i64 0, i32 0, i64 ()* @callee, i32 0, i32 0, i32 0, i32 0)
  %r = call i64 @llvm.experimental.gc.result.i64(token %t)
  ret i64 %r
}""", "does not match the target's return type"),
    "statepoint flags": (STATEPOINT_DECLS + """
define i64 @main() gc "statepoint-example" {
entry:
  %t = call token (i64, i32, i64 ()*, i32, i32, ...) @llvm.experimental.gc.statepoint.p0f_i64f(i64 0, i32 0, i64 ()* @callee, i32 0, i32 8, i32 0, i32 0)
  %r = call i64 @llvm.experimental.gc.result.i64(token %t)
  ret i64 %r
}""", STATEPOINT_DECLS + """
define i64 @main() gc "statepoint-example" {
entry:
  %t = call token (i64, i32, i64 ()*, i32, i32, ...) @llvm.experimental.gc.statepoint.p0f_i64f(i64 0, i32 0, i64 ()* @callee, i32 0, i32 1, i32 0, i32 0)
  %r = call i64 @llvm.experimental.gc.result.i64(token %t)
  ret i64 %r
}""", "flags 8 has bits outside"),
    "statepoint counts of type i64": ("""
declare token @llvm.experimental.gc.statepoint.p0f_i64f(i64 immarg, i32 immarg, i64 ()*, i64 immarg, i64 immarg, ...)
declare i64 @llvm.experimental.gc.result.i64(token)
define i64 @callee() {
entry:
  ret i64 7
}
define i64 @main() gc "statepoint-example" {
entry:
  %t = call token (i64, i32, i64 ()*, i64, i64, ...) @llvm.experimental.gc.statepoint.p0f_i64f(i64 0, i32 0, i64 ()* @callee, i64 0, i64 0, i32 0, i32 0)
  %r = call i64 @llvm.experimental.gc.result.i64(token %t)
  ret i64 %r
}""", STATEPOINT_DECLS + """
define i64 @main() gc "statepoint-example" {
entry:
  %t = call token (i64, i32, i64 ()*, i32, i32, ...) @llvm.experimental.gc.statepoint.p0f_i64f(i64 0, i32 0, i64 ()* @callee, i32 0, i32 0, i32 0, i32 0)
  %r = call i64 @llvm.experimental.gc.result.i64(token %t)
  ret i64 %r
}""", "number of call arguments (argument 3) must be a constant i32"),
    "statepoint marked readonly": ("""
declare void @foo()
declare token @llvm.experimental.gc.statepoint.p0f_isVoidf(i64 immarg, i32 immarg, void ()*, i32 immarg, i32 immarg, ...)
define i64 @main() gc "statepoint-example" {
entry:
  %t = call token (i64, i32, void ()*, i32, i32, ...) @llvm.experimental.gc.statepoint.p0f_isVoidf(i64 0, i32 0, void ()* @foo, i32 0, i32 0, i32 0, i32 0) #0
  ret i64 0
}
attributes #0 = { readonly }""", """
declare void @foo()
declare token @llvm.experimental.gc.statepoint.p0f_isVoidf(i64 immarg, i32 immarg, void ()*, i32 immarg, i32 immarg, ...)
define i64 @main() gc "statepoint-example" {
entry:
  %t = call token (i64, i32, void ()*, i32, i32, ...) @llvm.experimental.gc.statepoint.p0f_isVoidf(i64 0, i32 0, void ()* @foo, i32 0, i32 0, i32 0, i32 0) #0
  ret i64 0
}
attributes #0 = { writeonly }""", "gc.statepoint must read and write all memory"),
}
