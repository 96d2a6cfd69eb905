; Functions and globals whose names an assembler would read as registers, keywords or directives.
declare i8 addrspace(1)* @gc_alloc(i64, i64)
declare void @do_safepoint()
declare void @gc_collect()
declare void @print_i64(i64)

@.str = global i64 11
@meta.node = global [2 x i64] [i64 21, i64 22]
@"a b" = global i64 33
@"ptr.to" = global i64* @.str
@rip = global i64 55

define i64 @rax(i64 %x) gc "statepoint-example" {
entry:
  %o = call i8 addrspace(1)* @gc_alloc(i64 2, i64 0)
  %p = bitcast i8 addrspace(1)* %o to i64 addrspace(1)*
  store i64 %x, i64 addrspace(1)* %p
  call void @gc_collect()
  %v = load i64, i64 addrspace(1)* %p
  %r = add i64 %v, 100
  ret i64 %r
}

define i64 @rsp(i64 %x) gc "statepoint-example" {
entry:
  %o = call i8 addrspace(1)* @gc_alloc(i64 1, i64 0)
  %p = bitcast i8 addrspace(1)* %o to i64 addrspace(1)*
  store i64 %x, i64 addrspace(1)* %p
  %y = call i64 @rax(i64 %x)
  %v = load i64, i64 addrspace(1)* %p
  %z = add i64 %y, %v
  ret i64 %z
}

define i64 @byte() gc "statepoint-example" {
entry:
  %a = load i64, i64* @.str
  %pp = load i64*, i64** @"ptr.to"
  %b = load i64, i64* %pp
  %c = add i64 %a, %b
  ret i64 %c
}

define i64 @dword(i64 %i) gc "statepoint-example" {
entry:
  %p = getelementptr [2 x i64], [2 x i64]* @meta.node, i64 0, i64 %i
  %a = load i64, i64* %p
  ret i64 %a
}

define i64 @ptr(i64 (i64)* %f, i64 %x) gc "statepoint-example" {
entry:
  %r = call i64 %f(i64 %x)
  call void @do_safepoint()
  ret i64 %r
}

define i64 @"x y"() gc "statepoint-example" {
entry:
  %a = load i64, i64* @"a b"
  %b = load i64, i64* @rip
  %c = add i64 %a, %b
  ret i64 %c
}

define i64 @main() gc "statepoint-example" {
entry:
  %a = call i64 @rsp(i64 1)
  call void @print_i64(i64 %a)
  %b = call i64 @byte()
  call void @print_i64(i64 %b)
  %c = call i64 @dword(i64 1)
  call void @print_i64(i64 %c)
  %d = call i64 @ptr(i64 (i64)* @rax, i64 5)
  call void @print_i64(i64 %d)
  %e = call i64 @"x y"()
  call void @print_i64(i64 %e)
  ret i64 -7
}
