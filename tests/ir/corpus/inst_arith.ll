; Integer arithmetic add, sub and mul with and without the nsw and nuw flags, and constants.
define i32 @add_flags(i32 %a, i32 %b) {
entry:
  %s0 = add i32 %a, %b
  %s1 = add nsw i32 %s0, 1
  %s2 = add nuw i32 %s1, %b
  %s3 = add nuw nsw i32 %s2, -1
  ret i32 %s3
}

define i64 @sub_flags(i64 %a, i64 %b) {
entry:
  %d0 = sub i64 %a, %b
  %d1 = sub nsw i64 0, %d0
  %d2 = sub nuw i64 %d1, 3
  %d3 = sub nuw nsw i64 %d2, %a
  ret i64 %d3
}

define i8 @mul_flags(i8 %a, i8 %b) {
entry:
  %m0 = mul i8 %a, %b
  %m1 = mul nsw i8 %m0, 3
  %m2 = mul nuw i8 %m1, %a
  %m3 = mul nuw nsw i8 %m2, -2
  ret i8 %m3
}

define i128 @wide_arith(i128 %x) {
entry:
  %a = add i128 %x, 18446744073709551616
  %b = mul i128 %a, %a
  ret i128 %b
}

define i1 @bool_add(i1 %a, i1 %b) {
entry:
  %s = add i1 %a, %b
  ret i1 %s
}
