; Modern statepoint (LLVM 12+ form) around a void call with one "gc-live" pointer and its gc.relocate.
declare void @foo()
declare token @llvm.experimental.gc.statepoint.p0f_isVoidf(i64 immarg, i32 immarg, void ()*, i32 immarg, i32 immarg, ...)
declare i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token, i32 immarg, i32 immarg) #0

define i8 addrspace(1)* @relocate_one(i8 addrspace(1)* %obj) gc "statepoint-example" {
entry:
  ; id 0xABCDEF00, no patch bytes, callee @foo, 0 call args, flags 0, then the two zero counts
  %tok = call token (i64, i32, void ()*, i32, i32, ...) @llvm.experimental.gc.statepoint.p0f_isVoidf(i64 2882400000, i32 0, void ()* @foo, i32 0, i32 0, i32 0, i32 0) [ "gc-live"(i8 addrspace(1)* %obj) ]
  ; base index 0 and derived index 0 both name gc-live operand 0 (%obj)
  %obj.relocated = call coldcc i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token %tok, i32 0, i32 0)
  ret i8 addrspace(1)* %obj.relocated
}

define void @no_live_values() gc "statepoint-example" {
entry:
  %tok = call token (i64, i32, void ()*, i32, i32, ...) @llvm.experimental.gc.statepoint.p0f_isVoidf(i64 0, i32 0, void ()* @foo, i32 0, i32 0, i32 0, i32 0)
  ret void
}

define i8 addrspace(1)* @empty_gc_live(i8 addrspace(1)* %obj) gc "statepoint-example" {
entry:
  %tok = call token (i64, i32, void ()*, i32, i32, ...) @llvm.experimental.gc.statepoint.p0f_isVoidf(i64 1, i32 0, void ()* @foo, i32 0, i32 0, i32 0, i32 0) [ "gc-live"() ]
  ret i8 addrspace(1)* null
}

attributes #0 = { nounwind readnone }
