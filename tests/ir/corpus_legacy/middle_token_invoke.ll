; Middle form (token result) as an invoke: relocates on the normal path use the statepoint token,
; relocates on the unwind path use the "landingpad token"; indices are absolute (7 and 8).
declare void @foo()
declare i32 @__gxx_personality_v0(...)
declare token @llvm.experimental.gc.statepoint.p0f_isVoidf(i64, i32, void ()*, i32, i32, ...)
declare i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token, i32, i32)

define i8 addrspace(1)* @guarded(i8 addrspace(1)* %obj, i8 addrspace(1)* %alt) gc "statepoint-example" personality i32 (...)* @__gxx_personality_v0 {
entry:
  %tok = invoke token (i64, i32, void ()*, i32, i32, ...) @llvm.experimental.gc.statepoint.p0f_isVoidf(i64 2882400000, i32 0, void ()* @foo, i32 0, i32 0, i32 0, i32 0, i8 addrspace(1)* %obj, i8 addrspace(1)* %alt)
          to label %normal unwind label %exceptional

normal:
  %obj.n = call coldcc i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token %tok, i32 7, i32 7)
  ret i8 addrspace(1)* %obj.n

exceptional:
  %lp = landingpad token
          cleanup
  %alt.e = call coldcc i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token %lp, i32 8, i32 8)
  ret i8 addrspace(1)* %alt.e
}
