; An alloca listed in "gc-live" (an on-stack region reported to the collector) together with a
; heap pointer; only the heap pointer is relocated, the slot is reloaded after the statepoint.
declare void @foo()
declare token @llvm.experimental.gc.statepoint.p0f_isVoidf(i64 immarg, i32 immarg, void ()*, i32 immarg, i32 immarg, ...)
declare i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token, i32 immarg, i32 immarg) #0

define i8 addrspace(1)* @spill_slot(i8 addrspace(1)* %obj, i8 addrspace(1)* %kept) gc "statepoint-example" {
entry:
  %slot = alloca i8 addrspace(1)*, align 8
  store i8 addrspace(1)* %kept, i8 addrspace(1)** %slot, align 8
  %tok = call token (i64, i32, void ()*, i32, i32, ...) @llvm.experimental.gc.statepoint.p0f_isVoidf(i64 2882400000, i32 0, void ()* @foo, i32 0, i32 0, i32 0, i32 0) [ "gc-live"(i8 addrspace(1)** %slot, i8 addrspace(1)* %obj) ]
  %obj.r = call coldcc i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token %tok, i32 1, i32 1)
  %kept.r = load i8 addrspace(1)*, i8 addrspace(1)** %slot, align 8
  %same = icmp eq i8 addrspace(1)* %obj.r, %kept.r
  %r = select i1 %same, i8 addrspace(1)* %obj.r, i8 addrspace(1)* %kept.r
  ret i8 addrspace(1)* %r
}

attributes #0 = { nounwind readnone }
