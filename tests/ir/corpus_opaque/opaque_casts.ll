; Opaque pointers with casts: addrspacecast, ptrtoint and inttoptr (no pointer bitcasts needed).
define ptr addrspace(1) @to_heap(ptr %p) {
entry:
  %h = addrspacecast ptr %p to ptr addrspace(1)
  ret ptr addrspace(1) %h
}

define ptr @from_heap(ptr addrspace(1) %h) {
entry:
  %p = addrspacecast ptr addrspace(1) %h to ptr
  ret ptr %p
}

define i64 @address(ptr %p) {
entry:
  %a = ptrtoint ptr %p to i64
  ret i64 %a
}

define ptr @pointer(i64 %a) {
entry:
  %p = inttoptr i64 %a to ptr
  ret ptr %p
}
