; Middle statepoint form as in seed 004 (LLVM 3.7): i32 result, (id, #patch bytes, target,
; #call args, flags, call args, #transition, transition args, #deopt, deopt args, gc pointers).
declare void @foo()
declare i32 @llvm.experimental.gc.statepoint.p0f_isVoidf(i64, i32, void ()*, i32, i32, ...)
declare i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(i32, i32, i32)

define i8 addrspace(1)* @one_pointer(i8 addrspace(1)* %obj) gc "statepoint-example" {
entry:
  ; 0 id, 1 #patch, 2 @foo, 3 #call args = 0, 4 flags, 5 #transition = 0, 6 #deopt = 0, 7 %obj
  %tok = call i32 (i64, i32, void ()*, i32, i32, ...)* @llvm.experimental.gc.statepoint.p0f_isVoidf(i64 0, i32 0, void ()* @foo, i32 0, i32 0, i32 0, i32 0, i8 addrspace(1)* %obj)
  %obj.relocated = call coldcc i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(i32 %tok, i32 7, i32 7)
  ret i8 addrspace(1)* %obj.relocated
}

define void @patchable() gc "statepoint-example" {
entry:
  %tok = call i32 (i64, i32, void ()*, i32, i32, ...)* @llvm.experimental.gc.statepoint.p0f_isVoidf(i64 42, i32 5, void ()* @foo, i32 0, i32 0, i32 0, i32 0)
  ret void
}
