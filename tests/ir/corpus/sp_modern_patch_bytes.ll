; Statepoint IDs and patch bytes: custom IDs, a patchable call site with 5 and 16 bytes of nops,
; and the deopt-bundle ID 0xABCDEF0F.
declare void @foo()
declare void @bar(i32)
declare token @llvm.experimental.gc.statepoint.p0f_isVoidf(i64 immarg, i32 immarg, void ()*, i32 immarg, i32 immarg, ...)
declare token @llvm.experimental.gc.statepoint.p0f_isVoidi32f(i64 immarg, i32 immarg, void (i32)*, i32 immarg, i32 immarg, ...)
declare i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token, i32 immarg, i32 immarg) #0

define i8 addrspace(1)* @patchable(i8 addrspace(1)* %obj) gc "statepoint-example" {
entry:
  %t1 = call token (i64, i32, void ()*, i32, i32, ...) @llvm.experimental.gc.statepoint.p0f_isVoidf(i64 7, i32 5, void ()* @foo, i32 0, i32 0, i32 0, i32 0) [ "gc-live"(i8 addrspace(1)* %obj) ]
  %o1 = call coldcc i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token %t1, i32 0, i32 0)
  %t2 = call token (i64, i32, void (i32)*, i32, i32, ...) @llvm.experimental.gc.statepoint.p0f_isVoidi32f(i64 8, i32 16, void (i32)* @bar, i32 1, i32 0, i32 42, i32 0, i32 0) [ "gc-live"(i8 addrspace(1)* %o1) ]
  %o2 = call coldcc i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token %t2, i32 0, i32 0)
  %t3 = call token (i64, i32, void ()*, i32, i32, ...) @llvm.experimental.gc.statepoint.p0f_isVoidf(i64 2882400015, i32 0, void ()* @foo, i32 0, i32 0, i32 0, i32 0) [ "deopt"(i32 1), "gc-live"(i8 addrspace(1)* %o2) ]
  %o3 = call coldcc i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token %t3, i32 0, i32 0)
  ret i8 addrspace(1)* %o3
}

define void @patch_null_target() gc "statepoint-example" {
entry:
  ; with patch bytes the call target may be null: the runtime patches the call in
  %t = call token (i64, i32, void ()*, i32, i32, ...) @llvm.experimental.gc.statepoint.p0f_isVoidf(i64 100, i32 12, void ()* null, i32 0, i32 0, i32 0, i32 0)
  ret void
}

attributes #0 = { nounwind readnone }
