; Oldest statepoint form with call arguments and results: gc.result.int / gc.result.ptr /
; gc.result.float (the three-member gc.result family) and gc pointers after the call arguments.
declare i32 @combine(i32, i8 addrspace(1)*)
declare i8 addrspace(1)* @make(i64)
declare double @scale(double)
declare i32 @llvm.experimental.gc.statepoint.p0f_i32i32p1i8f(i32 (i32, i8 addrspace(1)*)*, i32, i32, ...)
declare i32 @llvm.experimental.gc.statepoint.p0f_p1i8i64f(i8 addrspace(1)* (i64)*, i32, i32, ...)
declare i32 @llvm.experimental.gc.statepoint.p0f_f64f64f(double (double)*, i32, i32, ...)
declare i32 @llvm.experimental.gc.result.int.i32(i32)
declare i8 addrspace(1)* @llvm.experimental.gc.result.ptr.p1i8(i32)
declare double @llvm.experimental.gc.result.float.f64(i32)
declare i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(i32, i32, i32)

define i32 @with_args(i32 %x, i8 addrspace(1)* %obj, i8 addrspace(1)* %other, i32 %bci) gc "statepoint-example" {
entry:
  ; 0 @combine, 1 #call args = 2, 2 flags, 3 %x, 4 %obj, 5 #deopt = 1, 6 %bci, 7 %obj, 8 %other
  %tok = call i32 (i32 (i32, i8 addrspace(1)*)*, i32, i32, ...)* @llvm.experimental.gc.statepoint.p0f_i32i32p1i8f(i32 (i32, i8 addrspace(1)*)* @combine, i32 2, i32 0, i32 %x, i8 addrspace(1)* %obj, i32 1, i32 %bci, i8 addrspace(1)* %obj, i8 addrspace(1)* %other)
  %r = call i32 @llvm.experimental.gc.result.int.i32(i32 %tok)
  %obj.relocated = call coldcc i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(i32 %tok, i32 7, i32 7)
  %other.relocated = call coldcc i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(i32 %tok, i32 8, i32 8)
  %same = icmp eq i8 addrspace(1)* %obj.relocated, %other.relocated
  %z = zext i1 %same to i32
  %s = add i32 %r, %z
  ret i32 %s
}

define i8 addrspace(1)* @allocating(i64 %n, i8 addrspace(1)* %keep) gc "statepoint-example" {
entry:
  ; 0 @make, 1 #call args = 1, 2 flags, 3 %n, 4 #deopt = 0, 5 %keep
  %tok = call i32 (i8 addrspace(1)* (i64)*, i32, i32, ...)* @llvm.experimental.gc.statepoint.p0f_p1i8i64f(i8 addrspace(1)* (i64)* @make, i32 1, i32 0, i64 %n, i32 0, i8 addrspace(1)* %keep)
  %fresh = call i8 addrspace(1)* @llvm.experimental.gc.result.ptr.p1i8(i32 %tok)
  %keep.relocated = call coldcc i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(i32 %tok, i32 5, i32 5)
  %none = icmp eq i8 addrspace(1)* %fresh, null
  %r = select i1 %none, i8 addrspace(1)* %keep.relocated, i8 addrspace(1)* %fresh
  ret i8 addrspace(1)* %r
}

define double @floating(double %d) gc "statepoint-example" {
entry:
  %tok = call i32 (double (double)*, i32, i32, ...)* @llvm.experimental.gc.statepoint.p0f_f64f64f(double (double)* @scale, i32 1, i32 0, double %d, i32 0)
  %r = call double @llvm.experimental.gc.result.float.f64(i32 %tok)
  ret double %r
}
