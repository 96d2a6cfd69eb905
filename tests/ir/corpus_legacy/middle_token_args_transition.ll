; Middle form (token result) with call arguments, two transition arguments, deopt values and a
; gc.result: gc pointers start at 7 + 2 call args + 2 transition + 2 deopt = 13.
@in_native = thread_local global i32 0, align 4

declare i64 @native_sum(i64, i8 addrspace(1)*)
declare token @llvm.experimental.gc.statepoint.p0f_i64i64p1i8f(i64, i32, i64 (i64, i8 addrspace(1)*)*, i32, i32, ...)
declare i64 @llvm.experimental.gc.result.i64(token)
declare i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token, i32, i32)
declare i32 addrspace(1)* @llvm.experimental.gc.relocate.p1i32(token, i32, i32)

define i64 @call_native(i64 %n, i8 addrspace(1)* %buf, i32 addrspace(1)* %counter) gc "statepoint-example" {
entry:
  ; 0 id, 1 #patch, 2 callee, 3 #call args = 2, 4 flags = 1, 5 %n, 6 %buf, 7 #transition = 2,
  ; 8 @in_native, 9 i32 1, 10 #deopt = 2, 11 %n, 12 i32 7, 13 %buf, 14 %counter
  %tok = call token (i64, i32, i64 (i64, i8 addrspace(1)*)*, i32, i32, ...) @llvm.experimental.gc.statepoint.p0f_i64i64p1i8f(i64 77, i32 0, i64 (i64, i8 addrspace(1)*)* @native_sum, i32 2, i32 1, i64 %n, i8 addrspace(1)* %buf, i32 2, i32* @in_native, i32 1, i32 2, i64 %n, i32 7, i8 addrspace(1)* %buf, i32 addrspace(1)* %counter)
  %sum = call i64 @llvm.experimental.gc.result.i64(token %tok)
  %buf.relocated = call coldcc i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token %tok, i32 13, i32 13)
  %counter.relocated = call coldcc i32 addrspace(1)* @llvm.experimental.gc.relocate.p1i32(token %tok, i32 14, i32 14)
  %c = load i32, i32 addrspace(1)* %counter.relocated
  %cw = sext i32 %c to i64
  %b = load i8, i8 addrspace(1)* %buf.relocated
  %bw = zext i8 %b to i64
  %s1 = add i64 %sum, %cw
  %s2 = add i64 %s1, %bw
  ret i64 %s2
}
