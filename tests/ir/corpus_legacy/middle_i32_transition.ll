; Middle form (i32 result) GC transition done right: flags 1, "#transition = 1" followed by the
; thread-local flag address, "#deopt = 0", so the gc pointer is at position 8 (= 7 + 0 + 1 + 0).
@flag = thread_local global i32 0, align 4

declare void @foo()
declare i32 @llvm.experimental.gc.statepoint.p0f_isVoidf(i64, i32, void ()*, i32, i32, ...)
declare i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(i32, i32, i32)

define i8 addrspace(1)* @transition(i8 addrspace(1)* %obj) gc "statepoint-example" {
entry:
  ; 0 id, 1 #patch, 2 @foo, 3 #call args = 0, 4 flags = 1, 5 #transition = 1, 6 @flag,
  ; 7 #deopt = 0, 8 %obj
  %tok = call i32 (i64, i32, void ()*, i32, i32, ...)* @llvm.experimental.gc.statepoint.p0f_isVoidf(i64 0, i32 0, void ()* @foo, i32 0, i32 1, i32 1, i32* @flag, i32 0, i8 addrspace(1)* %obj)
  %obj.relocated = call coldcc i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(i32 %tok, i32 8, i32 8)
  ret i8 addrspace(1)* %obj.relocated
}
