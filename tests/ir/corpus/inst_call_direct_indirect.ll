; Calls: direct, indirect through a loaded or passed function pointer, tail/musttail/notail calls,
; calls with attributes, calls returning aggregates and a call through a bitcast constant.
declare i32 @add1(i32)
declare { i32, i1 } @checked(i32)
declare void @takes_ptr(i8*)

@hook = global i32 (i32)* @add1

define i32 @direct(i32 %x) {
entry:
  %r = call i32 @add1(i32 %x)
  ret i32 %r
}

define i32 @through_global(i32 %x) {
entry:
  %f = load i32 (i32)*, i32 (i32)** @hook
  %r = call i32 %f(i32 %x)
  ret i32 %r
}

define void @through_param(void (i8*)* %cb, i8* %arg) {
entry:
  call void %cb(i8* %arg)
  ret void
}

define i32 @tails(i32 %x) {
entry:
  %a = tail call i32 @add1(i32 %x)
  %b = notail call i32 @add1(i32 %a)
  %c = musttail call i32 @add1(i32 %b)
  ret i32 %c
}

define i1 @aggregate_result(i32 %x) {
entry:
  %pair = call { i32, i1 } @checked(i32 %x)
  %ok = extractvalue { i32, i1 } %pair, 1
  ret i1 %ok
}

define void @cast_callee(i32* %p) {
entry:
  call void bitcast (void (i8*)* @takes_ptr to void (i32*)*)(i32* %p)
  ret void
}

define i32 @with_attrs(i32 %x) {
entry:
  %r = call i32 @add1(i32 signext %x) nounwind readnone
  ret i32 %r
}
