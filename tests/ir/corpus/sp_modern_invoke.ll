; Statepoints as invoke: relocates in the normal destination use the invoke's token; in the
; unwind destination they use the token produced by "landingpad token"; gc.result on the normal path.
declare void @foo()
declare i32 @may_throw_int()
declare i32 @__gxx_personality_v0(...)
declare void @rethrow() noreturn
declare token @llvm.experimental.gc.statepoint.p0f_isVoidf(i64 immarg, i32 immarg, void ()*, i32 immarg, i32 immarg, ...)
declare token @llvm.experimental.gc.statepoint.p0f_i32f(i64 immarg, i32 immarg, i32 ()*, i32 immarg, i32 immarg, ...)
declare i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token, i32 immarg, i32 immarg) #0
declare i32 @llvm.experimental.gc.result.i32(token) #0

define i8 addrspace(1)* @invoke_void(i8 addrspace(1)* %obj) gc "statepoint-example" personality i32 (...)* @__gxx_personality_v0 {
entry:
  %tok = invoke token (i64, i32, void ()*, i32, i32, ...) @llvm.experimental.gc.statepoint.p0f_isVoidf(i64 2882400000, i32 0, void ()* @foo, i32 0, i32 0, i32 0, i32 0) [ "gc-live"(i8 addrspace(1)* %obj) ]
          to label %normal unwind label %exceptional

normal:
  %obj.n = call coldcc i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token %tok, i32 0, i32 0)
  ret i8 addrspace(1)* %obj.n

exceptional:
  %lp = landingpad token
          cleanup
  %obj.e = call coldcc i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token %lp, i32 0, i32 0)
  ret i8 addrspace(1)* %obj.e
}

define i32 @invoke_result(i8 addrspace(1)* %obj, i32 %fallback) gc "statepoint-example" personality i32 (...)* @__gxx_personality_v0 {
entry:
  %d = getelementptr i8, i8 addrspace(1)* %obj, i64 4
  %tok = invoke token (i64, i32, i32 ()*, i32, i32, ...) @llvm.experimental.gc.statepoint.p0f_i32f(i64 2882400000, i32 0, i32 ()* @may_throw_int, i32 0, i32 0, i32 0, i32 0) [ "deopt"(i32 %fallback), "gc-live"(i8 addrspace(1)* %obj, i8 addrspace(1)* %d) ]
          to label %normal unwind label %exceptional

normal:
  %r = call i32 @llvm.experimental.gc.result.i32(token %tok)
  %d.n = call coldcc i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token %tok, i32 0, i32 1)
  %byte = load i8, i8 addrspace(1)* %d.n
  %wide = zext i8 %byte to i32
  %sum = add i32 %r, %wide
  br label %merge

exceptional:
  %lp = landingpad token
          catch i8* null
  %obj.e = call coldcc i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token %lp, i32 0, i32 0)
  %d.e = call coldcc i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token %lp, i32 0, i32 1)
  %alive = icmp ne i8 addrspace(1)* %d.e, null
  %alt = select i1 %alive, i32 %fallback, i32 -1
  br label %merge

merge:
  %res = phi i32 [ %sum, %normal ], [ %alt, %exceptional ]
  ret i32 %res
}

define void @invoke_then_rethrow(i8 addrspace(1)* %obj) gc "statepoint-example" personality i32 (...)* @__gxx_personality_v0 {
entry:
  %tok = invoke token (i64, i32, void ()*, i32, i32, ...) @llvm.experimental.gc.statepoint.p0f_isVoidf(i64 2882400000, i32 0, void ()* @foo, i32 0, i32 0, i32 0, i32 0) [ "gc-live"(i8 addrspace(1)* %obj) ]
          to label %normal unwind label %exceptional

normal:
  ret void

exceptional:
  %lp = landingpad token
          cleanup
  ; nothing is live here, so no relocates; the runtime rethrows
  call void @rethrow()
  unreachable
}

attributes #0 = { nounwind readnone }
