; Function definitions and declarations with gc "statepoint-example", gc "coreclr" and gc "shadow-stack".
declare void @runtime_poll()
declare i8 addrspace(1)* @allocate(i64)
declare void @external_gc() gc "statepoint-example"

define i8 addrspace(1)* @with_statepoint_example(i64 %size) gc "statepoint-example" {
entry:
  %obj = call i8 addrspace(1)* @allocate(i64 %size)
  ret i8 addrspace(1)* %obj
}

define void @with_coreclr() gc "coreclr" {
entry:
  call void @runtime_poll()
  ret void
}

define i32 @with_shadow_stack(i32 %x) gc "shadow-stack" {
entry:
  %root = alloca i8*, align 8
  store i8* null, i8** %root
  %y = add i32 %x, 1
  ret i32 %y
}

define void @no_gc() {
entry:
  call void @external_gc()
  ret void
}
