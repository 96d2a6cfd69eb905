; Modern (LLVM 14) equivalent of oldest_call_args_result.ll: call arguments stay inline, the
; deopt value and gc pointers move to bundles, and all gc.result variants become gc.result.<type>.
declare i32 @combine(i32, i8 addrspace(1)*)
declare i8 addrspace(1)* @make(i64)
declare double @scale(double)
declare token @llvm.experimental.gc.statepoint.p0f_i32i32p1i8f(i64 immarg, i32 immarg, i32 (i32, i8 addrspace(1)*)*, i32 immarg, i32 immarg, ...)
declare token @llvm.experimental.gc.statepoint.p0f_p1i8i64f(i64 immarg, i32 immarg, i8 addrspace(1)* (i64)*, i32 immarg, i32 immarg, ...)
declare token @llvm.experimental.gc.statepoint.p0f_f64f64f(i64 immarg, i32 immarg, double (double)*, i32 immarg, i32 immarg, ...)
declare i32 @llvm.experimental.gc.result.i32(token) #0
declare i8 addrspace(1)* @llvm.experimental.gc.result.p1i8(token) #0
declare double @llvm.experimental.gc.result.f64(token) #0
declare i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token, i32 immarg, i32 immarg) #0

define i32 @with_args(i32 %x, i8 addrspace(1)* %obj, i8 addrspace(1)* %other, i32 %bci) gc "statepoint-example" {
entry:
  ; old positions 7 and 8 are gc-live entries 0 and 1
  %tok = call token (i64, i32, i32 (i32, i8 addrspace(1)*)*, i32, i32, ...) @llvm.experimental.gc.statepoint.p0f_i32i32p1i8f(i64 2882400000, i32 0, i32 (i32, i8 addrspace(1)*)* @combine, i32 2, i32 0, i32 %x, i8 addrspace(1)* %obj, i32 0, i32 0) [ "deopt"(i32 %bci), "gc-live"(i8 addrspace(1)* %obj, i8 addrspace(1)* %other) ]
  %r = call i32 @llvm.experimental.gc.result.i32(token %tok)
  %obj.relocated = call coldcc i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token %tok, i32 0, i32 0)
  %other.relocated = call coldcc i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token %tok, i32 1, i32 1)
  %same = icmp eq i8 addrspace(1)* %obj.relocated, %other.relocated
  %z = zext i1 %same to i32
  %s = add i32 %r, %z
  ret i32 %s
}

define i8 addrspace(1)* @allocating(i64 %n, i8 addrspace(1)* %keep) gc "statepoint-example" {
entry:
  ; an empty inline deopt section becomes no "deopt" bundle at all
  %tok = call token (i64, i32, i8 addrspace(1)* (i64)*, i32, i32, ...) @llvm.experimental.gc.statepoint.p0f_p1i8i64f(i64 2882400000, i32 0, i8 addrspace(1)* (i64)* @make, i32 1, i32 0, i64 %n, i32 0, i32 0) [ "gc-live"(i8 addrspace(1)* %keep) ]
  %fresh = call i8 addrspace(1)* @llvm.experimental.gc.result.p1i8(token %tok)
  %keep.relocated = call coldcc i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token %tok, i32 0, i32 0)
  %none = icmp eq i8 addrspace(1)* %fresh, null
  %r = select i1 %none, i8 addrspace(1)* %keep.relocated, i8 addrspace(1)* %fresh
  ret i8 addrspace(1)* %r
}

define double @floating(double %d) gc "statepoint-example" {
entry:
  %tok = call token (i64, i32, double (double)*, i32, i32, ...) @llvm.experimental.gc.statepoint.p0f_f64f64f(i64 2882400000, i32 0, double (double)* @scale, i32 1, i32 0, double %d, i32 0, i32 0)
  %r = call double @llvm.experimental.gc.result.f64(token %tok)
  ret double %r
}

attributes #0 = { nounwind readnone }
