; Base and derived pointers: a derived pointer is listed with its base in "gc-live" and relocated
; with (base index, derived index); the relocated derived pointer is used after the statepoint.
declare void @foo()
declare token @llvm.experimental.gc.statepoint.p0f_isVoidf(i64 immarg, i32 immarg, void ()*, i32 immarg, i32 immarg, ...)
declare i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token, i32 immarg, i32 immarg) #0
declare i64 addrspace(1)* @llvm.experimental.gc.relocate.p1i64(token, i32 immarg, i32 immarg) #0

define i8 addrspace(1)* @interior(i8 addrspace(1)* %obj) gc "statepoint-example" {
entry:
  %gep = getelementptr i8, i8 addrspace(1)* %obj, i64 20000
  %tok = call token (i64, i32, void ()*, i32, i32, ...) @llvm.experimental.gc.statepoint.p0f_isVoidf(i64 2882400000, i32 0, void ()* @foo, i32 0, i32 0, i32 0, i32 0) [ "gc-live"(i8 addrspace(1)* %obj, i8 addrspace(1)* %gep) ]
  %obj.r = call coldcc i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token %tok, i32 0, i32 0)
  %gep.r = call coldcc i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token %tok, i32 0, i32 1)
  %p = getelementptr i8, i8 addrspace(1)* %gep.r, i64 -20000
  ret i8 addrspace(1)* %p
}

define i64 @derived_of_other_type(i8 addrspace(1)* %base) gc "statepoint-example" {
entry:
  %raw = getelementptr inbounds i8, i8 addrspace(1)* %base, i64 8
  %field = bitcast i8 addrspace(1)* %raw to i64 addrspace(1)*
  ; the base is listed second: relocate indices refer to positions, not to roles
  %tok = call token (i64, i32, void ()*, i32, i32, ...) @llvm.experimental.gc.statepoint.p0f_isVoidf(i64 2882400000, i32 0, void ()* @foo, i32 0, i32 0, i32 0, i32 0) [ "gc-live"(i64 addrspace(1)* %field, i8 addrspace(1)* %base) ]
  %field.r = call coldcc i64 addrspace(1)* @llvm.experimental.gc.relocate.p1i64(token %tok, i32 1, i32 0)
  %v = load i64, i64 addrspace(1)* %field.r
  ret i64 %v
}

define i8 addrspace(1)* @only_derived_used(i8 addrspace(1)* %obj, i64 %k) gc "statepoint-example" {
entry:
  %d = getelementptr i8, i8 addrspace(1)* %obj, i64 %k
  ; the base must be reported even though only the derived pointer is used afterwards
  %tok = call token (i64, i32, void ()*, i32, i32, ...) @llvm.experimental.gc.statepoint.p0f_isVoidf(i64 2882400000, i32 0, void ()* @foo, i32 0, i32 0, i32 0, i32 0) [ "gc-live"(i8 addrspace(1)* %obj, i8 addrspace(1)* %d) ]
  %d.r = call coldcc i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token %tok, i32 0, i32 1)
  ret i8 addrspace(1)* %d.r
}

attributes #0 = { nounwind readnone }
