; alloca: scalar, with an element count (constant and dynamic), with align, of structs, arrays and pointers.
%Frame = type { i64, i8 addrspace(1)* }

define i64 @frame_slots(i32 %n) {
entry:
  %one = alloca i64
  %aligned = alloca i64, align 16
  %four = alloca i32, i32 4
  %four_aligned = alloca i8, i64 4, align 4
  %dynamic = alloca i8, i32 %n, align 8
  %rec = alloca %Frame, align 8
  %arr = alloca [8 x i8 addrspace(1)*], align 8
  %fnptr = alloca void ()*
  store i64 1, i64* %one
  store i64 2, i64* %aligned, align 16
  %x = load i64, i64* %one
  %y = load i64, i64* %aligned, align 16
  %s = add i64 %x, %y
  ret i64 %s
}
