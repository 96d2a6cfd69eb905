; Typed pointers: i8*, i32**, i8 addrspace(1)*, pointers to named structs and function pointers.
%Node = type { i64, %Node* }

@counter = global i32 0
@counter_ptr = global i32* @counter
@counter_ptr_ptr = global i32** @counter_ptr
@handler = global void (i32)* @on_event
@heap_slot = global i8 addrspace(1)* null

define void @on_event(i32 %code) {
entry:
  store i32 %code, i32* @counter
  ret void
}

define i32 @deref2(i32** %pp) {
entry:
  %p = load i32*, i32** %pp
  %v = load i32, i32* %p
  ret i32 %v
}

define %Node* @next(%Node* %n) {
entry:
  %slot = getelementptr %Node, %Node* %n, i32 0, i32 1
  %nx = load %Node*, %Node** %slot
  ret %Node* %nx
}

define void @dispatch(void (i32)** %table, i32 %code) {
entry:
  %fn = load void (i32)*, void (i32)** %table
  call void %fn(i32 %code)
  ret void
}

define i8 addrspace(1)* @heap_load(i8 addrspace(1)* addrspace(1)* %field) {
entry:
  %v = load i8 addrspace(1)*, i8 addrspace(1)* addrspace(1)* %field
  ret i8 addrspace(1)* %v
}

define i64 (i64, i64)* @pick_op(i1 %mul) {
entry:
  %f = select i1 %mul, i64 (i64, i64)* @mul2, i64 (i64, i64)* @add2
  ret i64 (i64, i64)* %f
}

define i64 @add2(i64 %a, i64 %b) {
entry:
  %s = add i64 %a, %b
  ret i64 %s
}

define i64 @mul2(i64 %a, i64 %b) {
entry:
  %s = mul i64 %a, %b
  ret i64 %s
}
