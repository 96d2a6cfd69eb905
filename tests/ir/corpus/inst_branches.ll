; Control flow: unconditional and conditional br, switch (with and without cases), ret void,
; ret of a value, unreachable, and a block reached from several edges.
declare void @abort() noreturn

define void @ret_void() {
entry:
  ret void
}

define i32 @cond(i1 %c) {
entry:
  br i1 %c, label %yes, label %no

yes:
  ret i32 1

no:
  br label %tail

tail:
  ret i32 0
}

define i32 @dispatch(i64 %op) {
entry:
  switch i64 %op, label %bad [
    i64 0, label %zero
    i64 1, label %one
    i64 -1, label %one
    i64 4294967296, label %big
  ]

zero:
  ret i32 0

one:
  ret i32 1

big:
  ret i32 2

bad:
  call void @abort()
  unreachable
}

define void @only_default(i8 %x) {
entry:
  switch i8 %x, label %out [
  ]

out:
  ret void
}

define i32 @same_target_twice(i1 %c) {
entry:
  br i1 %c, label %both, label %both

both:
  ret i32 7
}

define void @dead_end() {
entry:
  unreachable
}
