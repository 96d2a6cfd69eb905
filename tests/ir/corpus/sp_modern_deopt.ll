; Deoptimization state in a "deopt" operand bundle on a statepoint, next to "gc-live"; flags 2
; (deopt live-in) and a gc pointer that is both a deopt value and relocated.
declare void @foo()
declare token @llvm.experimental.gc.statepoint.p0f_isVoidf(i64 immarg, i32 immarg, void ()*, i32 immarg, i32 immarg, ...)
declare i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token, i32 immarg, i32 immarg) #0

define i8 addrspace(1)* @with_deopt(i32 %bci, i64 %local, i8 addrspace(1)* %obj) gc "statepoint-example" {
entry:
  %tok = call token (i64, i32, void ()*, i32, i32, ...) @llvm.experimental.gc.statepoint.p0f_isVoidf(i64 2882400000, i32 0, void ()* @foo, i32 0, i32 0, i32 0, i32 0) [ "deopt"(i32 0, i32 -1, i32 %bci, i64 %local, i8 addrspace(1)* %obj), "gc-live"(i8 addrspace(1)* %obj) ]
  %obj.r = call coldcc i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token %tok, i32 0, i32 0)
  ret i8 addrspace(1)* %obj.r
}

define void @deopt_only(i32 %x) gc "statepoint-example" {
entry:
  %tok = call token (i64, i32, void ()*, i32, i32, ...) @llvm.experimental.gc.statepoint.p0f_isVoidf(i64 2882400015, i32 0, void ()* @foo, i32 0, i32 2, i32 0, i32 0) [ "deopt"(i32 %x, i64 5, i1 false) ]
  ret void
}

define void @empty_deopt() gc "statepoint-example" {
entry:
  %tok = call token (i64, i32, void ()*, i32, i32, ...) @llvm.experimental.gc.statepoint.p0f_isVoidf(i64 2882400000, i32 0, void ()* @foo, i32 0, i32 0, i32 0, i32 0) [ "deopt"() ]
  ret void
}

attributes #0 = { nounwind readnone }
