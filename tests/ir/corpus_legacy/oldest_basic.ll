; Oldest statepoint form (seed 001): i32 result, (target, #call args, flags, call args, #deopt,
; deopt args, gc pointers); relocate indices are absolute argument positions.
declare void @foo()
declare i32 @llvm.experimental.gc.statepoint.p0f_isVoidf(void ()*, i32, i32, ...)
declare i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(i32, i32, i32)

define i8 addrspace(1)* @one_pointer(i8 addrspace(1)* %obj) gc "statepoint-example" {
entry:
  ; positions: 0 @foo, 1 #call args = 0, 2 flags = 0, 3 #deopt = 0, 4 %obj
  %tok = call i32 (void ()*, i32, i32, ...)* @llvm.experimental.gc.statepoint.p0f_isVoidf(void ()* @foo, i32 0, i32 0, i32 0, i8 addrspace(1)* %obj)
  %obj.relocated = call coldcc i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(i32 %tok, i32 4, i32 4)
  ret i8 addrspace(1)* %obj.relocated
}

define void @nothing_live() gc "statepoint-example" {
entry:
  %tok = call i32 (void ()*, i32, i32, ...)* @llvm.experimental.gc.statepoint.p0f_isVoidf(void ()* @foo, i32 0, i32 0, i32 0)
  ret void
}
