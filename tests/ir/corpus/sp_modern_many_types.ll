; Relocating gc pointers of several types in one statepoint (i8, i32, i64*, a named struct and a
; pointer-to-pointer), with gc.relocate overloads per type and duplicated gc-live entries.
%Obj = type { i64, i8 addrspace(1)* }

declare void @foo()
declare token @llvm.experimental.gc.statepoint.p0f_isVoidf(i64 immarg, i32 immarg, void ()*, i32 immarg, i32 immarg, ...)
declare i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token, i32 immarg, i32 immarg) #0
declare i32 addrspace(1)* @llvm.experimental.gc.relocate.p1i32(token, i32 immarg, i32 immarg) #0
declare %Obj addrspace(1)* @llvm.experimental.gc.relocate.p1s_Objs(token, i32 immarg, i32 immarg) #0
declare i8 addrspace(1)* addrspace(1)* @llvm.experimental.gc.relocate.p1p1i8(token, i32 immarg, i32 immarg) #0

define i64 @mixed(i8 addrspace(1)* %a, i32 addrspace(1)* %b, %Obj addrspace(1)* %c) gc "statepoint-example" {
entry:
  %field = getelementptr inbounds %Obj, %Obj addrspace(1)* %c, i64 0, i32 1
  %tok = call token (i64, i32, void ()*, i32, i32, ...) @llvm.experimental.gc.statepoint.p0f_isVoidf(i64 2882400000, i32 0, void ()* @foo, i32 0, i32 0, i32 0, i32 0) [ "gc-live"(i8 addrspace(1)* %a, i32 addrspace(1)* %b, %Obj addrspace(1)* %c, i8 addrspace(1)* addrspace(1)* %field, i8 addrspace(1)* %a) ]
  %a.r = call coldcc i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token %tok, i32 0, i32 0)
  %a.dup = call coldcc i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token %tok, i32 4, i32 4)
  %b.r = call coldcc i32 addrspace(1)* @llvm.experimental.gc.relocate.p1i32(token %tok, i32 1, i32 1)
  %c.r = call coldcc %Obj addrspace(1)* @llvm.experimental.gc.relocate.p1s_Objs(token %tok, i32 2, i32 2)
  %field.r = call coldcc i8 addrspace(1)* addrspace(1)* @llvm.experimental.gc.relocate.p1p1i8(token %tok, i32 2, i32 3)
  %inner = load i8 addrspace(1)*, i8 addrspace(1)* addrspace(1)* %field.r
  %same = icmp eq i8 addrspace(1)* %inner, %a.dup
  %hp = getelementptr inbounds %Obj, %Obj addrspace(1)* %c.r, i64 0, i32 0
  %h = load i64, i64 addrspace(1)* %hp
  %v = load i32, i32 addrspace(1)* %b.r
  %vw = zext i32 %v to i64
  %s = add i64 %h, %vw
  %r = select i1 %same, i64 %s, i64 0
  ret i64 %r
}

attributes #0 = { nounwind readnone }
