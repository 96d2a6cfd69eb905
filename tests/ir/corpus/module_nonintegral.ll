; A datalayout declaring address space 1 non-integral (as GC'd languages do), with heap
; pointers that are compared, selected and stored but never converted to integers.
target datalayout = "e-m:e-i64:64-f80:128-n8:16:32:64-S128-ni:1"
target triple = "x86_64-pc-linux-gnu"

%Obj = type { i8 addrspace(1)*, i64 }

define void @link(%Obj addrspace(1)* %from, i8 addrspace(1)* %to) {
entry:
  %slot = getelementptr inbounds %Obj, %Obj addrspace(1)* %from, i64 0, i32 0
  store i8 addrspace(1)* %to, i8 addrspace(1)* addrspace(1)* %slot, align 8
  ret void
}

define i1 @linked(%Obj addrspace(1)* %from, i8 addrspace(1)* %to) {
entry:
  %slot = getelementptr inbounds %Obj, %Obj addrspace(1)* %from, i64 0, i32 0
  %cur = load i8 addrspace(1)*, i8 addrspace(1)* addrspace(1)* %slot, align 8
  %eq = icmp eq i8 addrspace(1)* %cur, %to
  ret i1 %eq
}
