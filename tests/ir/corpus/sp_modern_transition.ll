; GC transitions: flags bit 0 set and the transition data in a "gc-transition" bundle
; (a thread-local flag address and a constant), alongside "deopt" and "gc-live".
@in_native = thread_local global i32 0, align 4

declare void @native_call(i64)
declare token @llvm.experimental.gc.statepoint.p0f_isVoidi64f(i64 immarg, i32 immarg, void (i64)*, i32 immarg, i32 immarg, ...)
declare i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token, i32 immarg, i32 immarg) #0

define i8 addrspace(1)* @to_native(i8 addrspace(1)* %obj, i64 %arg) gc "statepoint-example" {
entry:
  %tok = call token (i64, i32, void (i64)*, i32, i32, ...) @llvm.experimental.gc.statepoint.p0f_isVoidi64f(i64 2882400000, i32 0, void (i64)* @native_call, i32 1, i32 1, i64 %arg, i32 0, i32 0) [ "gc-transition"(i32* @in_native, i32 1), "gc-live"(i8 addrspace(1)* %obj) ]
  %obj.r = call coldcc i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token %tok, i32 0, i32 0)
  ret i8 addrspace(1)* %obj.r
}

define void @transition_with_deopt(i64 %arg) gc "statepoint-example" {
entry:
  ; flags 3 = GC transition | deopt live-in
  %tok = call token (i64, i32, void (i64)*, i32, i32, ...) @llvm.experimental.gc.statepoint.p0f_isVoidi64f(i64 2882400000, i32 0, void (i64)* @native_call, i32 1, i32 3, i64 %arg, i32 0, i32 0) [ "deopt"(i64 %arg), "gc-transition"(i32* @in_native) ]
  ret void
}

attributes #0 = { nounwind readnone }
