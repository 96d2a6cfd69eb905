; Opaque pointers with calls: direct calls, indirect calls through a ptr (the call spells the
; function type), varargs, and a function-pointer table.
declare void @v(i32, ...)
declare i32 @twice(i32)

@table = constant [2 x ptr] [ptr @twice, ptr null]

define i32 @indirect(ptr %fn, i32 %x) {
entry:
  %r = call i32 %fn(i32 %x)
  ret i32 %r
}

define i32 @from_table(i32 %x) {
entry:
  %slot = getelementptr inbounds [2 x ptr], ptr @table, i64 0, i64 0
  %fn = load ptr, ptr %slot, align 8
  %r = call i32 %fn(i32 %x)
  ret i32 %r
}

define void @variadic(ptr addrspace(1) %obj) {
entry:
  call void (i32, ...) @v(i32 1, i64 2)
  call void (i32, ...) @v(i32 2, ptr addrspace(1) %obj)
  ret void
}
