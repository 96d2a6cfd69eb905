; Statepoints whose target is not a function symbol: a loaded function pointer, a select of two
; functions and a bitcast constant expression.
@vtable_slot = global void (i8 addrspace(1)*)* @impl_a

declare void @impl_a(i8 addrspace(1)*)
declare void @impl_b(i8 addrspace(1)*)
declare void @untyped(i8*)
declare token @llvm.experimental.gc.statepoint.p0f_isVoidp1i8f(i64 immarg, i32 immarg, void (i8 addrspace(1)*)*, i32 immarg, i32 immarg, ...)
declare token @llvm.experimental.gc.statepoint.p0f_isVoidp0i32f(i64 immarg, i32 immarg, void (i32*)*, i32 immarg, i32 immarg, ...)
declare i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token, i32 immarg, i32 immarg) #0

define i8 addrspace(1)* @virtual_call(i8 addrspace(1)* %self) gc "statepoint-example" {
entry:
  %fn = load void (i8 addrspace(1)*)*, void (i8 addrspace(1)*)** @vtable_slot
  %tok = call token (i64, i32, void (i8 addrspace(1)*)*, i32, i32, ...) @llvm.experimental.gc.statepoint.p0f_isVoidp1i8f(i64 2882400000, i32 0, void (i8 addrspace(1)*)* %fn, i32 1, i32 0, i8 addrspace(1)* %self, i32 0, i32 0) [ "gc-live"(i8 addrspace(1)* %self) ]
  %self.r = call coldcc i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token %tok, i32 0, i32 0)
  ret i8 addrspace(1)* %self.r
}

define void @chosen(i1 %c, i8 addrspace(1)* %arg) gc "statepoint-example" {
entry:
  %fn = select i1 %c, void (i8 addrspace(1)*)* @impl_a, void (i8 addrspace(1)*)* @impl_b
  %tok = call token (i64, i32, void (i8 addrspace(1)*)*, i32, i32, ...) @llvm.experimental.gc.statepoint.p0f_isVoidp1i8f(i64 2882400000, i32 0, void (i8 addrspace(1)*)* %fn, i32 1, i32 0, i8 addrspace(1)* %arg, i32 0, i32 0)
  ret void
}

define void @cast_target(i32* %p) gc "statepoint-example" {
entry:
  %tok = call token (i64, i32, void (i32*)*, i32, i32, ...) @llvm.experimental.gc.statepoint.p0f_isVoidp0i32f(i64 2882400000, i32 0, void (i32*)* bitcast (void (i8*)* @untyped to void (i32*)*), i32 1, i32 0, i32* %p, i32 0, i32 0)
  ret void
}

attributes #0 = { nounwind readnone }
