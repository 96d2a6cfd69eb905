; A statepoint of a variadic void callee: #call args counts every passed argument (at least the
; fixed ones), and the mangled name ends in "varargf".
declare void @v(i32, ...)
declare token @llvm.experimental.gc.statepoint.p0f_isVoidi32varargf(i64 immarg, i32 immarg, void (i32, ...)*, i32 immarg, i32 immarg, ...)
declare i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token, i32 immarg, i32 immarg) #0

define i8 addrspace(1)* @log(i8 addrspace(1)* %obj, i64 %x) gc "statepoint-example" {
entry:
  %t1 = call token (i64, i32, void (i32, ...)*, i32, i32, ...) @llvm.experimental.gc.statepoint.p0f_isVoidi32varargf(i64 2882400000, i32 0, void (i32, ...)* @v, i32 2, i32 0, i32 1, i64 %x, i32 0, i32 0) [ "gc-live"(i8 addrspace(1)* %obj) ]
  %o1 = call coldcc i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token %t1, i32 0, i32 0)
  %t2 = call token (i64, i32, void (i32, ...)*, i32, i32, ...) @llvm.experimental.gc.statepoint.p0f_isVoidi32varargf(i64 2882400000, i32 0, void (i32, ...)* @v, i32 1, i32 0, i32 0, i32 0, i32 0) [ "gc-live"(i8 addrspace(1)* %o1) ]
  %o2 = call coldcc i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token %t2, i32 0, i32 0)
  ret i8 addrspace(1)* %o2
}

attributes #0 = { nounwind readnone }
