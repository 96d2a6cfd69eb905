; Division and remainder: sdiv, udiv (with and without exact), srem and urem.
define i32 @divisions(i32 %a, i32 %b) {
entry:
  %q0 = sdiv i32 %a, %b
  %q1 = sdiv exact i32 %q0, 4
  %q2 = udiv i32 %a, %b
  %q3 = udiv exact i32 %q2, 2
  %s = add i32 %q1, %q3
  ret i32 %s
}

define i64 @remainders(i64 %a, i64 %b) {
entry:
  %r0 = srem i64 %a, %b
  %r1 = urem i64 %a, 8
  %s = add i64 %r0, %r1
  ret i64 %s
}

define i8 @small_div(i8 %a) {
entry:
  %q = sdiv i8 %a, -3
  %r = urem i8 %q, 7
  ret i8 %r
}
