; Statepoints of non-void callees with gc.result of i32, i1, double, a heap pointer and a
; pointer to a named struct; a returned gc pointer is not relocated at its own statepoint.
%Obj = type { i64, i8 addrspace(1)* }

declare i32 @get_int(i32)
declare i1 @get_flag()
declare double @get_real(float)
declare i8 addrspace(1)* @new_object()
declare %Obj addrspace(1)* @new_typed()
declare token @llvm.experimental.gc.statepoint.p0f_i32i32f(i64 immarg, i32 immarg, i32 (i32)*, i32 immarg, i32 immarg, ...)
declare token @llvm.experimental.gc.statepoint.p0f_i1f(i64 immarg, i32 immarg, i1 ()*, i32 immarg, i32 immarg, ...)
declare token @llvm.experimental.gc.statepoint.p0f_f64f32f(i64 immarg, i32 immarg, double (float)*, i32 immarg, i32 immarg, ...)
declare token @llvm.experimental.gc.statepoint.p0f_p1i8f(i64 immarg, i32 immarg, i8 addrspace(1)* ()*, i32 immarg, i32 immarg, ...)
declare token @llvm.experimental.gc.statepoint.p0f_p1s_Objsf(i64 immarg, i32 immarg, %Obj addrspace(1)* ()*, i32 immarg, i32 immarg, ...)
declare i32 @llvm.experimental.gc.result.i32(token) #0
declare i1 @llvm.experimental.gc.result.i1(token) #0
declare double @llvm.experimental.gc.result.f64(token) #0
declare i8 addrspace(1)* @llvm.experimental.gc.result.p1i8(token) #0
declare %Obj addrspace(1)* @llvm.experimental.gc.result.p1s_Objs(token) #0
declare i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token, i32 immarg, i32 immarg) #0

define i32 @int_result(i32 %x) gc "statepoint-example" {
entry:
  %tok = call token (i64, i32, i32 (i32)*, i32, i32, ...) @llvm.experimental.gc.statepoint.p0f_i32i32f(i64 2882400000, i32 0, i32 (i32)* @get_int, i32 1, i32 0, i32 %x, i32 0, i32 0)
  %r = call i32 @llvm.experimental.gc.result.i32(token %tok)
  ret i32 %r
}

define i1 @flag_result() gc "statepoint-example" {
entry:
  %tok = call token (i64, i32, i1 ()*, i32, i32, ...) @llvm.experimental.gc.statepoint.p0f_i1f(i64 2882400000, i32 0, i1 ()* @get_flag, i32 0, i32 0, i32 0, i32 0)
  %r = call i1 @llvm.experimental.gc.result.i1(token %tok)
  ret i1 %r
}

define double @real_result(float %f) gc "statepoint-example" {
entry:
  %tok = call token (i64, i32, double (float)*, i32, i32, ...) @llvm.experimental.gc.statepoint.p0f_f64f32f(i64 2882400000, i32 0, double (float)* @get_real, i32 1, i32 0, float %f, i32 0, i32 0)
  %r = call double @llvm.experimental.gc.result.f64(token %tok)
  ret double %r
}

define i8 addrspace(1)* @two_allocations() gc "statepoint-example" {
entry:
  %t1 = call token (i64, i32, i8 addrspace(1)* ()*, i32, i32, ...) @llvm.experimental.gc.statepoint.p0f_p1i8f(i64 2882400000, i32 0, i8 addrspace(1)* ()* @new_object, i32 0, i32 0, i32 0, i32 0)
  %first = call i8 addrspace(1)* @llvm.experimental.gc.result.p1i8(token %t1)
  ; the first object must survive the second allocation
  %t2 = call token (i64, i32, i8 addrspace(1)* ()*, i32, i32, ...) @llvm.experimental.gc.statepoint.p0f_p1i8f(i64 2882400000, i32 0, i8 addrspace(1)* ()* @new_object, i32 0, i32 0, i32 0, i32 0) [ "gc-live"(i8 addrspace(1)* %first) ]
  %second = call i8 addrspace(1)* @llvm.experimental.gc.result.p1i8(token %t2)
  %first.r = call coldcc i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token %t2, i32 0, i32 0)
  %same = icmp eq i8 addrspace(1)* %first.r, %second
  %r = select i1 %same, i8 addrspace(1)* null, i8 addrspace(1)* %first.r
  ret i8 addrspace(1)* %r
}

define i64 @typed_result() gc "statepoint-example" {
entry:
  %tok = call token (i64, i32, %Obj addrspace(1)* ()*, i32, i32, ...) @llvm.experimental.gc.statepoint.p0f_p1s_Objsf(i64 2882400000, i32 0, %Obj addrspace(1)* ()* @new_typed, i32 0, i32 0, i32 0, i32 0)
  %o = call %Obj addrspace(1)* @llvm.experimental.gc.result.p1s_Objs(token %tok)
  %h = getelementptr inbounds %Obj, %Obj addrspace(1)* %o, i64 0, i32 0
  %v = load i64, i64 addrspace(1)* %h
  ret i64 %v
}

attributes #0 = { nounwind readnone }
