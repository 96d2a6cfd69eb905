; Integer width casts: trunc, zext and sext between i1, i8, i16, i32, i64 and i128.
define i8 @trunc_chain(i64 %x) {
entry:
  %a = trunc i64 %x to i32
  %b = trunc i32 %a to i16
  %c = trunc i16 %b to i8
  ret i8 %c
}

define i64 @zext_chain(i1 %b) {
entry:
  %a = zext i1 %b to i8
  %c = zext i8 %a to i32
  %d = zext i32 %c to i64
  ret i64 %d
}

define i128 @sext_chain(i8 %x) {
entry:
  %a = sext i8 %x to i32
  %b = sext i32 %a to i64
  %c = sext i64 %b to i128
  ret i128 %c
}

define i1 @low_bit(i32 %x) {
entry:
  %b = trunc i32 %x to i1
  ret i1 %b
}

define i32 @sign_of_bool(i1 %b) {
entry:
  %s = sext i1 %b to i32
  ret i32 %s
}
