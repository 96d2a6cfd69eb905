; extractvalue and insertvalue on literal and named structs, arrays and nested aggregates.
%Rec = type { i32, [2 x i64], { i8, i1 } }

define i64 @pick(%Rec %r) {
entry:
  %x = extractvalue %Rec %r, 1, 1
  %n = extractvalue %Rec %r, 2, 0
  %w = zext i8 %n to i64
  %s = add i64 %x, %w
  ret i64 %s
}

define %Rec @build(i32 %a, i64 %b) {
entry:
  %r0 = insertvalue %Rec undef, i32 %a, 0
  %r1 = insertvalue %Rec %r0, i64 %b, 1, 0
  %r2 = insertvalue %Rec %r1, i64 0, 1, 1
  %r3 = insertvalue %Rec %r2, { i8, i1 } { i8 1, i1 false }, 2
  ret %Rec %r3
}

define [3 x i32] @array_update([3 x i32] %a, i32 %v) {
entry:
  %old = extractvalue [3 x i32] %a, 2
  %new = add i32 %old, %v
  %b = insertvalue [3 x i32] %a, i32 %new, 2
  ret [3 x i32] %b
}

define { i8 addrspace(1)*, i64 } @fat_pointer(i8 addrspace(1)* %p, i64 %len) {
entry:
  %a = insertvalue { i8 addrspace(1)*, i64 } zeroinitializer, i8 addrspace(1)* %p, 0
  %b = insertvalue { i8 addrspace(1)*, i64 } %a, i64 %len, 1
  ret { i8 addrspace(1)*, i64 } %b
}
