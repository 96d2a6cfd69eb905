; Statepoints whose callee takes arguments: #call args counts them, they follow the flags operand,
; and their types match the callee's parameters exactly (including a gc pointer argument).
declare void @consume(i8 addrspace(1)*)
declare i64 @mix(i64, i8 addrspace(1)*, i32 addrspace(1)*)
declare token @llvm.experimental.gc.statepoint.p0f_isVoidp1i8f(i64 immarg, i32 immarg, void (i8 addrspace(1)*)*, i32 immarg, i32 immarg, ...)
declare token @llvm.experimental.gc.statepoint.p0f_i64i64p1i8p1i32f(i64 immarg, i32 immarg, i64 (i64, i8 addrspace(1)*, i32 addrspace(1)*)*, i32 immarg, i32 immarg, ...)
declare i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token, i32 immarg, i32 immarg) #0
declare i32 addrspace(1)* @llvm.experimental.gc.relocate.p1i32(token, i32 immarg, i32 immarg) #0
declare i64 @llvm.experimental.gc.result.i64(token) #0

define i8 addrspace(1)* @pass_and_keep(i8 addrspace(1)* %obj) gc "statepoint-example" {
entry:
  %tok = call token (i64, i32, void (i8 addrspace(1)*)*, i32, i32, ...) @llvm.experimental.gc.statepoint.p0f_isVoidp1i8f(i64 2882400000, i32 0, void (i8 addrspace(1)*)* @consume, i32 1, i32 0, i8 addrspace(1)* %obj, i32 0, i32 0) [ "gc-live"(i8 addrspace(1)* %obj) ]
  %obj.r = call coldcc i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token %tok, i32 0, i32 0)
  ret i8 addrspace(1)* %obj.r
}

define i64 @three_args(i64 %n, i8 addrspace(1)* %a, i32 addrspace(1)* %b) gc "statepoint-example" {
entry:
  %tok = call token (i64, i32, i64 (i64, i8 addrspace(1)*, i32 addrspace(1)*)*, i32, i32, ...) @llvm.experimental.gc.statepoint.p0f_i64i64p1i8p1i32f(i64 2882400000, i32 0, i64 (i64, i8 addrspace(1)*, i32 addrspace(1)*)* @mix, i32 3, i32 0, i64 %n, i8 addrspace(1)* %a, i32 addrspace(1)* %b, i32 0, i32 0) [ "gc-live"(i8 addrspace(1)* %a, i32 addrspace(1)* %b) ]
  %r = call i64 @llvm.experimental.gc.result.i64(token %tok)
  %a.r = call coldcc i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token %tok, i32 0, i32 0)
  %b.r = call coldcc i32 addrspace(1)* @llvm.experimental.gc.relocate.p1i32(token %tok, i32 1, i32 1)
  %v = load i32, i32 addrspace(1)* %b.r
  %w = sext i32 %v to i64
  %s = add i64 %r, %w
  ret i64 %s
}

attributes #0 = { nounwind readnone }
