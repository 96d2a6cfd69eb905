; A statepoint for a non-relocating collector: pointers are reported in "gc-live" but no
; gc.relocate is emitted and later code keeps using the original values.
declare void @foo()
declare token @llvm.experimental.gc.statepoint.p0f_isVoidf(i64 immarg, i32 immarg, void ()*, i32 immarg, i32 immarg, ...)

define i8 addrspace(1)* @report_only(i8 addrspace(1)* %obj, i8 addrspace(1)* %other) gc "statepoint-example" {
entry:
  %tok = call token (i64, i32, void ()*, i32, i32, ...) @llvm.experimental.gc.statepoint.p0f_isVoidf(i64 2882400000, i32 0, void ()* @foo, i32 0, i32 0, i32 0, i32 0) [ "gc-live"(i8 addrspace(1)* %obj, i8 addrspace(1)* %other) ]
  %same = icmp eq i8 addrspace(1)* %obj, %other
  %r = select i1 %same, i8 addrspace(1)* %obj, i8 addrspace(1)* %other
  ret i8 addrspace(1)* %r
}

define void @unused_token() gc "statepoint-example" {
entry:
  call token (i64, i32, void ()*, i32, i32, ...) @llvm.experimental.gc.statepoint.p0f_isVoidf(i64 2882400000, i32 0, void ()* @foo, i32 0, i32 0, i32 0, i32 0)
  ret void
}
