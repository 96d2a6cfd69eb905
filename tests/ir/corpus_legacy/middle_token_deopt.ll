; Middle statepoint form with a token result (LLVM 3.8 to 11): five inline deopt values put the
; first gc pointer at position 12 (= 7 + 0 call args + 0 transition + 5 deopt); a derived pointer follows.
declare void @foo()
declare token @llvm.experimental.gc.statepoint.p0f_isVoidf(i64, i32, void ()*, i32, i32, ...)
declare i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token, i32, i32)

define i8 addrspace(1)* @deopt_and_derived(i8 addrspace(1)* %obj, i32 %bci) gc "statepoint-example" {
entry:
  %gep = getelementptr i8, i8 addrspace(1)* %obj, i64 40
  %tok = call token (i64, i32, void ()*, i32, i32, ...) @llvm.experimental.gc.statepoint.p0f_isVoidf(i64 2882400000, i32 0, void ()* @foo, i32 0, i32 0, i32 0, i32 5, i32 0, i32 -1, i32 %bci, i32 0, i32 0, i8 addrspace(1)* %obj, i8 addrspace(1)* %gep)
  %obj.relocated = call coldcc i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token %tok, i32 12, i32 12)
  %gep.relocated = call coldcc i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token %tok, i32 12, i32 13)
  %back = getelementptr i8, i8 addrspace(1)* %gep.relocated, i64 -40
  %same = icmp eq i8 addrspace(1)* %back, %obj.relocated
  %r = select i1 %same, i8 addrspace(1)* %obj.relocated, i8 addrspace(1)* %gep.relocated
  ret i8 addrspace(1)* %r
}
