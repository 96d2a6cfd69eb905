; Modern (LLVM 14) equivalent of middle_token_args_transition.ll: call arguments stay inline,
; transition and deopt values move to bundles, positions 13 and 14 become gc-live entries 0 and 1.
@in_native = thread_local global i32 0, align 4

declare i64 @native_sum(i64, i8 addrspace(1)*)
declare token @llvm.experimental.gc.statepoint.p0f_i64i64p1i8f(i64 immarg, i32 immarg, i64 (i64, i8 addrspace(1)*)*, i32 immarg, i32 immarg, ...)
declare i64 @llvm.experimental.gc.result.i64(token) #0
declare i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token, i32 immarg, i32 immarg) #0
declare i32 addrspace(1)* @llvm.experimental.gc.relocate.p1i32(token, i32 immarg, i32 immarg) #0

define i64 @call_native(i64 %n, i8 addrspace(1)* %buf, i32 addrspace(1)* %counter) gc "statepoint-example" {
entry:
  %tok = call token (i64, i32, i64 (i64, i8 addrspace(1)*)*, i32, i32, ...) @llvm.experimental.gc.statepoint.p0f_i64i64p1i8f(i64 77, i32 0, i64 (i64, i8 addrspace(1)*)* @native_sum, i32 2, i32 1, i64 %n, i8 addrspace(1)* %buf, i32 0, i32 0) [ "deopt"(i64 %n, i32 7), "gc-transition"(i32* @in_native, i32 1), "gc-live"(i8 addrspace(1)* %buf, i32 addrspace(1)* %counter) ]
  %sum = call i64 @llvm.experimental.gc.result.i64(token %tok)
  %buf.relocated = call coldcc i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token %tok, i32 0, i32 0)
  %counter.relocated = call coldcc i32 addrspace(1)* @llvm.experimental.gc.relocate.p1i32(token %tok, i32 1, i32 1)
  %c = load i32, i32 addrspace(1)* %counter.relocated
  %cw = sext i32 %c to i64
  %b = load i8, i8 addrspace(1)* %buf.relocated
  %bw = zext i8 %b to i64
  %s1 = add i64 %sum, %cw
  %s2 = add i64 %s1, %bw
  ret i64 %s2
}

attributes #0 = { nounwind readnone }
