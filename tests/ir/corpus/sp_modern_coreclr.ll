; Statepoints in functions using gc "coreclr", plus the "gc-leaf-function" attribute on a call
; that needs no safepoint, and a statepoint carrying call-site attributes.
declare void @foo()
declare void @leaf() "gc-leaf-function"
declare token @llvm.experimental.gc.statepoint.p0f_isVoidf(i64 immarg, i32 immarg, void ()*, i32 immarg, i32 immarg, ...)
declare i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token, i32 immarg, i32 immarg) #0

define i8 addrspace(1)* @managed(i8 addrspace(1)* %obj) gc "coreclr" {
entry:
  call void @leaf() "gc-leaf-function"
  %tok = call token (i64, i32, void ()*, i32, i32, ...) @llvm.experimental.gc.statepoint.p0f_isVoidf(i64 2882400000, i32 0, void ()* @foo, i32 0, i32 0, i32 0, i32 0) #1 [ "gc-live"(i8 addrspace(1)* %obj) ]
  %obj.r = call coldcc i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token %tok, i32 0, i32 0)
  ret i8 addrspace(1)* %obj.r
}

attributes #0 = { nounwind readnone }
attributes #1 = { "gctoy-site"="managed-entry" }
