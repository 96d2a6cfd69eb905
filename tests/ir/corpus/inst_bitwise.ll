; Shifts and bitwise logic: shl (nsw/nuw), lshr and ashr (exact), and, or, xor, including i1 logic.
define i32 @shifts(i32 %x, i32 %n) {
entry:
  %a = shl i32 %x, %n
  %b = shl nuw i32 %a, 1
  %c = shl nsw i32 %b, 2
  %d = shl nuw nsw i32 %c, 3
  %e = lshr i32 %d, %n
  %f = lshr exact i32 %e, 1
  %g = ashr i32 %f, 2
  %h = ashr exact i32 %g, %n
  ret i32 %h
}

define i64 @logic(i64 %a, i64 %b) {
entry:
  %and = and i64 %a, %b
  %or = or i64 %and, 255
  %xor = xor i64 %or, %a
  %not = xor i64 %xor, -1
  ret i64 %not
}

define i1 @bool_logic(i1 %p, i1 %q) {
entry:
  %a = and i1 %p, %q
  %o = or i1 %a, %p
  %x = xor i1 %o, true
  ret i1 %x
}

define i64 @tag_bits(i64 %word) {
entry:
  %tag = and i64 %word, 7
  %untagged = and i64 %word, -8
  %shifted = lshr i64 %untagged, 3
  %combined = or i64 %shifted, %tag
  ret i64 %combined
}
