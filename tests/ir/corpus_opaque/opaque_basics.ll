; Opaque pointers: ptr and ptr addrspace(1) in globals, parameters, loads, stores and returns.
target datalayout = "e-m:e-i64:64-f80:128-n8:16:32:64-S128-ni:1"
target triple = "x86_64-pc-linux-gnu"

@counter = global i32 0
@counter_ref = global ptr @counter
@heap_root = global ptr addrspace(1) null

define i32 @read_through(ptr %pp) {
entry:
  %p = load ptr, ptr %pp, align 8
  %v = load i32, ptr %p, align 4
  ret i32 %v
}

define void @set_root(ptr addrspace(1) %obj) {
entry:
  store ptr addrspace(1) %obj, ptr @heap_root, align 8
  ret void
}

define ptr addrspace(1) @get_root() {
entry:
  %r = load ptr addrspace(1), ptr @heap_root, align 8
  ret ptr addrspace(1) %r
}

define i1 @is_null(ptr addrspace(1) %p) {
entry:
  %c = icmp eq ptr addrspace(1) %p, null
  ret i1 %c
}
