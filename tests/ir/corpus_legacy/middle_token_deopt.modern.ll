; Modern (LLVM 14) equivalent of middle_token_deopt.ll: the five deopt values form a "deopt"
; bundle and positions 12 and 13 become gc-live entries 0 and 1.
declare void @foo()
declare token @llvm.experimental.gc.statepoint.p0f_isVoidf(i64 immarg, i32 immarg, void ()*, i32 immarg, i32 immarg, ...)
declare i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token, i32 immarg, i32 immarg) #0

define i8 addrspace(1)* @deopt_and_derived(i8 addrspace(1)* %obj, i32 %bci) gc "statepoint-example" {
entry:
  %gep = getelementptr i8, i8 addrspace(1)* %obj, i64 40
  %tok = call token (i64, i32, void ()*, i32, i32, ...) @llvm.experimental.gc.statepoint.p0f_isVoidf(i64 2882400000, i32 0, void ()* @foo, i32 0, i32 0, i32 0, i32 0) [ "deopt"(i32 0, i32 -1, i32 %bci, i32 0, i32 0), "gc-live"(i8 addrspace(1)* %obj, i8 addrspace(1)* %gep) ]
  %obj.relocated = call coldcc i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token %tok, i32 0, i32 0)
  %gep.relocated = call coldcc i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token %tok, i32 0, i32 1)
  %back = getelementptr i8, i8 addrspace(1)* %gep.relocated, i64 -40
  %same = icmp eq i8 addrspace(1)* %back, %obj.relocated
  %r = select i1 %same, i8 addrspace(1)* %obj.relocated, i8 addrspace(1)* %gep.relocated
  ret i8 addrspace(1)* %r
}

attributes #0 = { nounwind readnone }
