; Modern (LLVM 14) equivalent of middle_token_invoke.ll: positions 7 and 8 become gc-live
; entries 0 and 1 on both the normal and the unwind path.
declare void @foo()
declare i32 @__gxx_personality_v0(...)
declare token @llvm.experimental.gc.statepoint.p0f_isVoidf(i64 immarg, i32 immarg, void ()*, i32 immarg, i32 immarg, ...)
declare i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token, i32 immarg, i32 immarg) #0

define i8 addrspace(1)* @guarded(i8 addrspace(1)* %obj, i8 addrspace(1)* %alt) gc "statepoint-example" personality i32 (...)* @__gxx_personality_v0 {
entry:
  %tok = invoke token (i64, i32, void ()*, i32, i32, ...) @llvm.experimental.gc.statepoint.p0f_isVoidf(i64 2882400000, i32 0, void ()* @foo, i32 0, i32 0, i32 0, i32 0) [ "gc-live"(i8 addrspace(1)* %obj, i8 addrspace(1)* %alt) ]
          to label %normal unwind label %exceptional

normal:
  %obj.n = call coldcc i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token %tok, i32 0, i32 0)
  ret i8 addrspace(1)* %obj.n

exceptional:
  %lp = landingpad token
          cleanup
  %alt.e = call coldcc i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token %lp, i32 1, i32 1)
  ret i8 addrspace(1)* %alt.e
}

attributes #0 = { nounwind readnone }
