; Integer widths i1, i8, i32, i64 and i128 as parameters, results and constants; void functions.
target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-f80:128-n8:16:32:64-S128"
target triple = "x86_64-pc-linux-gnu"

@flag = global i1 true
@byte = global i8 -1
@word = global i32 2147483647
@quad = global i64 -9223372036854775808
@wide = global i128 170141183460469231731687303715884105727

define i1 @is_zero(i32 %x) {
entry:
  %c = icmp eq i32 %x, 0
  ret i1 %c
}

define i128 @widen(i64 %lo, i64 %hi) {
entry:
  %l = zext i64 %lo to i128
  %h = zext i64 %hi to i128
  %hs = shl i128 %h, 64
  %r = or i128 %hs, %l
  ret i128 %r
}

define i8 @low_byte(i128 %v) {
entry:
  %b = trunc i128 %v to i8
  ret i8 %b
}

define void @nothing() {
entry:
  ret void
}

define void @store_all(i1 %a, i8 %b, i32 %c, i64 %d, i128 %e) {
entry:
  store i1 %a, i1* @flag
  store i8 %b, i8* @byte
  store i32 %c, i32* @word
  store i64 %d, i64* @quad
  store i128 %e, i128* @wide
  ret void
}
