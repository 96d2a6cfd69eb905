; Oldest statepoint form with five inline deopt values and a base/derived pair: the first gc
; pointer sits at position 9 (0 target, 1-2 counts/flags, 3 #deopt, 4-8 deopt values).
declare void @foo()
declare i32 @llvm.experimental.gc.statepoint.p0f_isVoidf(void ()*, i32, i32, ...)
declare i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(i32, i32, i32)

define i8 addrspace(1)* @derived(i8 addrspace(1)* %obj, i32 %bci) gc "statepoint-example" {
entry:
  %gep = getelementptr i8, i8 addrspace(1)* %obj, i64 24
  %tok = call i32 (void ()*, i32, i32, ...)* @llvm.experimental.gc.statepoint.p0f_isVoidf(void ()* @foo, i32 0, i32 0, i32 5, i32 0, i32 -1, i32 %bci, i32 0, i32 0, i8 addrspace(1)* %obj, i8 addrspace(1)* %gep)
  %obj.relocated = call coldcc i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(i32 %tok, i32 9, i32 9)
  %gep.relocated = call coldcc i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(i32 %tok, i32 9, i32 10)
  %back = getelementptr i8, i8 addrspace(1)* %gep.relocated, i64 -24
  %same = icmp eq i8 addrspace(1)* %back, %obj.relocated
  %r = select i1 %same, i8 addrspace(1)* %obj.relocated, i8 addrspace(1)* null
  ret i8 addrspace(1)* %r
}
