; The token type (statepoint result, landingpad token) and the label type (branch targets).
declare void @work()
declare i32 @__gxx_personality_v0(...)
declare token @llvm.experimental.gc.statepoint.p0f_isVoidf(i64 immarg, i32 immarg, void ()*, i32 immarg, i32 immarg, ...)

define void @tokens(i1 %c) gc "statepoint-example" personality i32 (...)* @__gxx_personality_v0 {
entry:
  br i1 %c, label %call_path, label %invoke_path

call_path:
  %t0 = call token (i64, i32, void ()*, i32, i32, ...) @llvm.experimental.gc.statepoint.p0f_isVoidf(i64 1, i32 0, void ()* @work, i32 0, i32 0, i32 0, i32 0)
  br label %done

invoke_path:
  %t1 = invoke token (i64, i32, void ()*, i32, i32, ...) @llvm.experimental.gc.statepoint.p0f_isVoidf(i64 2, i32 0, void ()* @work, i32 0, i32 0, i32 0, i32 0)
          to label %done unwind label %unwind

unwind:
  %lp = landingpad token
          cleanup
  br label %done

done:
  ret void
}

define i32 @labels(i32 %x) {
entry:
  switch i32 %x, label %other [
    i32 0, label %zero
    i32 1, label %one
  ]

zero:
  br label %exit

one:
  br label %exit

other:
  br label %exit

exit:
  %r = phi i32 [ 10, %zero ], [ 11, %one ], [ 12, %other ]
  ret i32 %r
}
