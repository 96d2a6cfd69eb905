; Opaque pointers with getelementptr: the source element type carries the layout
; (named structs, arrays, struct field indices, address space 1).
%Obj = type { i64, ptr addrspace(1), [4 x i32] }

define ptr addrspace(1) @field(ptr addrspace(1) %o) {
entry:
  %f = getelementptr inbounds %Obj, ptr addrspace(1) %o, i64 0, i32 1
  %v = load ptr addrspace(1), ptr addrspace(1) %f, align 8
  ret ptr addrspace(1) %v
}

define i32 @element(ptr addrspace(1) %o, i64 %i) {
entry:
  %e = getelementptr inbounds %Obj, ptr addrspace(1) %o, i64 0, i32 2, i64 %i
  %v = load i32, ptr addrspace(1) %e, align 4
  ret i32 %v
}

define ptr @byte_offset(ptr %base, i64 %n) {
entry:
  %p = getelementptr i8, ptr %base, i64 %n
  ret ptr %p
}

define ptr addrspace(1) @derived(ptr addrspace(1) %obj) {
entry:
  %d = getelementptr i8, ptr addrspace(1) %obj, i64 16
  ret ptr addrspace(1) %d
}
